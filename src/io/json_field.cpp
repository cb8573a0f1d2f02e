#include "io/json_field.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "util/check.h"

namespace amaxcheck {
namespace {

const char* type_name(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a number";
    default: return "something else";
  }
}

}  // namespace

std::string JsonField::got() const {
  std::string text = value_->dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return fmt::format("got {} {}", type_name(*value_), text);
}

void JsonField::fail(const std::string& what) const {
  throw InputError(fmt::format("{}: {}: {}", *where_, path_.empty() ? "(top level)" : path_, what));
}

void JsonField::expect_object() const {
  if (!value_->is_object()) fail("expected an object, " + got());
}

JsonField JsonField::at(const char* key) const {
  expect_object();
  auto it = value_->find(key);
  const std::string child = path_.empty() ? key : path_ + "." + key;
  if (it == value_->end()) throw InputError(fmt::format("{}: {}: missing required field", *where_, child));
  return JsonField(*it, child, *where_);
}

std::optional<JsonField> JsonField::find(const char* key) const {
  expect_object();
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonField(*it, path_.empty() ? key : path_ + "." + key, *where_);
}

std::vector<JsonField> JsonField::items() const {
  if (!value_->is_array()) fail("expected an array, " + got());
  std::vector<JsonField> fields;
  for (std::size_t i = 0; i < value_->size(); ++i) {
    fields.emplace_back((*value_)[i], fmt::format("{}[{}]", path_, i), *where_);
  }
  return fields;
}

void JsonField::allow_only(std::initializer_list<const char*> allowed) const {
  expect_object();
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    bool known = false;
    std::string all;
    for (const char* key : allowed) {
      known |= it.key() == key;
      all += (all.empty() ? "" : ", ") + std::string(key);
    }
    if (!known) {
      // An empty key would read as no field at all ("in.json: : unknown field").
      const std::string key = it.key().empty() ? "\"\" (an empty key)" : it.key();
      throw InputError(fmt::format("{}: {}: unknown field; expected one of: {}", *where_,
                                   path_.empty() ? key : path_ + "." + key, all));
    }
  }
}

std::string JsonField::as_string() const {
  if (!value_->is_string()) fail("expected a string, " + got());
  return value_->get<std::string>();
}

bool JsonField::as_bool() const {
  if (!value_->is_boolean()) fail("expected true or false, " + got());
  return value_->get<bool>();
}

std::uint64_t JsonField::as_uint64() const {
  if (!value_->is_number_unsigned() && !(value_->is_number_integer() && value_->get<std::int64_t>() >= 0)) {
    fail("expected a non-negative integer, " + got());
  }
  return value_->get<std::uint64_t>();
}

std::uint32_t JsonField::as_uint(std::uint64_t max) const {
  const std::uint64_t value = as_uint64();
  if (value > max) fail(fmt::format("expected an integer in [0, {}], {}", max, got()));
  return static_cast<std::uint32_t>(value);
}

int JsonField::as_int(int min, int max) const {
  if (!value_->is_number_integer() || value_->get<std::int64_t>() < min || value_->get<std::int64_t>() > max) {
    fail(fmt::format("expected an integer in [{}, {}], {}", min, max, got()));
  }
  return static_cast<int>(value_->get<std::int64_t>());
}

double JsonField::as_double() const {
  if (!value_->is_number()) fail("expected a number, " + got());
  return value_->get<double>();
}

float JsonField::as_float() const {
  if (value_->is_string()) {
    const std::string text = value_->get<std::string>();
    if (text == "inf") return std::numeric_limits<float>::infinity();
    if (text == "-inf") return -std::numeric_limits<float>::infinity();
    if (text == "nan") return std::numeric_limits<float>::quiet_NaN();
  }
  if (!value_->is_number()) fail("expected a number (or \"inf\", \"-inf\", \"nan\"), " + got());
  const double value = value_->get<double>();
  if (std::isfinite(value) && std::fabs(value) > std::numeric_limits<float>::max()) {
    fail("expected a number within float range, " + got());
  }
  return static_cast<float>(value);
}

std::vector<float> JsonField::as_floats() const {
  std::vector<float> values;
  for (const JsonField& item : items()) values.push_back(item.as_float());
  return values;
}

void JsonField::fail_choice(const std::string& choices) const { fail(fmt::format("expected {}, {}", choices, got())); }

nlohmann::json float_to_json(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return static_cast<double>(value);
}

}  // namespace amaxcheck
