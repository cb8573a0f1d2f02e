#pragma once
/// JsonField: a JSON value that knows its path, so every read can fail with
/// "<file>: <path>: expected ..., got ...".
///
/// Paths use the scenario format's own notation: `ranks[1].threads[0].program[3].reads[0].count`.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "util/enum_names.h"

namespace amaxcheck {

class JsonField {
 public:
  JsonField(const nlohmann::json& value, std::string path, const std::string& where)
      : value_(&value), path_(std::move(path)), where_(&where) {}

  const std::string& path() const { return path_; }
  const nlohmann::json& json() const { return *value_; }

  /// A required member of an object.
  JsonField at(const char* key) const;
  /// An optional member of an object (absent, or null).
  std::optional<JsonField> find(const char* key) const;
  /// The elements of an array.
  std::vector<JsonField> items() const;
  /// Fails when the object has a member outside `allowed` (typos must not pass silently).
  void allow_only(std::initializer_list<const char*> allowed) const;

  void expect_object() const;
  std::string as_string() const;
  bool as_bool() const;
  std::uint32_t as_uint(std::uint64_t max = 0xffffffffu) const;
  std::uint64_t as_uint64() const;
  int as_int(int min, int max) const;
  double as_double() const;
  /// A float: a number, or one of the strings "inf", "-inf", "nan" (JSON has no literals).
  float as_float() const;
  std::vector<float> as_floats() const;
  /// The enumerator named by the string (util/enum_names.h), else fails with every name.
  template <typename E>
  E as_enum() const {
    if (auto value = parse_enum<E>(as_string())) return *value;
    fail_choice(enum_name_list<E>("|"));
  }

  /// Throws InputError "<where>: <path>: <what>".
  [[noreturn]] void fail(const std::string& what) const;
  /// Throws "expected <choices>, got <this value>".
  [[noreturn]] void fail_choice(const std::string& choices) const;

 private:
  std::string got() const;
  const nlohmann::json* value_;
  std::string path_;
  const std::string* where_;
};

/// A float as JSON: a number, or "inf" / "-inf" / "nan".
nlohmann::json float_to_json(float value);

}  // namespace amaxcheck
