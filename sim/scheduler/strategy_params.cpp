#include "scheduler/strategy_params.h"

#include <charconv>

#include "scheduler/prng.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

template <class T>
std::optional<T> parse_whole(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool is_choice(std::string_view choices, std::string_view text) {
  while (true) {
    const std::size_t bar = choices.find('|');
    if (choices.substr(0, bar) == text) return true;
    if (bar == std::string_view::npos) return false;
    choices.remove_prefix(bar + 1);
  }
}

/// What a value of `param` must look like, for error messages.
std::string expected(const StrategyParam& param) {
  switch (param.type) {
    case ParamType::flag: return "true or false";
    case ParamType::count: return "a whole number >= 0";
    case ParamType::integer: return "a whole number";
    case ParamType::number: return "a number";
    case ParamType::choice: return param.choices;
  }
  return "?";
}

bool valid(const StrategyParam& param, std::string_view text) {
  switch (param.type) {
    case ParamType::flag: return text == "true" || text == "false";
    case ParamType::count: return parse_whole<std::uint64_t>(text).has_value();
    case ParamType::integer: return parse_whole<std::int64_t>(text).has_value();
    case ParamType::number: return parse_number(text).has_value();
    case ParamType::choice: return is_choice(param.choices, text);
  }
  return false;
}

}  // namespace

std::optional<std::uint64_t> SampledRuns::run_seed(std::uint64_t index) const {
  if (index >= runs) return std::nullopt;
  return mix_seed(seed, index);
}

const std::string* StrategyArgs::find(std::string_view name) const {
  const auto it = given_.find(name);
  return it == given_.end() ? nullptr : &it->second;
}

void check_param_value(const StrategyParam& param, std::string_view text) {
  if (!valid(param, text)) throw InputError(fmt::format("--{}: expected {}, got \"{}\"", param.name, expected(param), text));
}

std::string_view StrategySetup::text(std::string_view name, ParamType type) const {
  for (const StrategyParam& param : params_) {
    if (param.name != name) continue;
    AMAX_CHECK(param.type == type, fmt::format("strategy parameter '{}' read as another type", name));
    const std::string* given = args_.find(name);
    const std::string_view value = given ? std::string_view(*given) : std::string_view(param.default_value);
    check_param_value(param, value);
    return value;
  }
  AMAX_CHECK(false, fmt::format("strategy parameter '{}' is not in its strategy's table entry", name));
  return {};
}

bool StrategySetup::flag(std::string_view name) const { return text(name, ParamType::flag) == "true"; }

std::uint64_t StrategySetup::count(std::string_view name) const {
  return *parse_whole<std::uint64_t>(text(name, ParamType::count));
}

std::int64_t StrategySetup::integer(std::string_view name) const {
  return *parse_whole<std::int64_t>(text(name, ParamType::integer));
}

double StrategySetup::number(std::string_view name) const { return *parse_number(text(name, ParamType::number)); }

std::string StrategySetup::choice(std::string_view name) const { return std::string(text(name, ParamType::choice)); }

}  // namespace amaxcheck::sched
