#include "protocols/knob_values.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace amaxcheck::knobs {
namespace {

std::string got(const std::string& text) { return fmt::format("got \"{}\"", text); }

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

/// A whole-string decimal integer (no sign, no spaces); nullopt otherwise.
std::optional<std::uint64_t> whole_uint(const std::string& text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<float> whole_float(const std::string& text) {
  if (text.empty()) return std::nullopt;
  // strtof accepts "inf", "nan" and exponents; from_chars for float is missing in older libstdc++.
  char* end = nullptr;
  const float value = std::strtof(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

Parsed<std::uint64_t> parse_uint(const std::string& text, std::uint64_t min, std::uint64_t max) {
  const auto value = whole_uint(text);
  if (!value || *value < min || *value > max) {
    return fmt::format("expected an integer in [{}, {}], {}", min, max, got(text));
  }
  return *value;
}

Parsed<int> parse_int(const std::string& text, int min, int max) {
  const bool negative = !text.empty() && text[0] == '-';
  const auto magnitude = whole_uint(negative ? text.substr(1) : text);
  const long long value = magnitude && *magnitude < (1ull << 40)
                              ? (negative ? -static_cast<long long>(*magnitude)
                                          : static_cast<long long>(*magnitude))
                              : std::numeric_limits<long long>::max();
  if (!magnitude || value < min || value > max) {
    return fmt::format("expected an integer in [{}, {}], {}", min, max, got(text));
  }
  return static_cast<int>(value);
}

Parsed<double> parse_double(const std::string& text, double min, double max) {
  const auto value = whole_float(text);
  if (!value || !std::isfinite(*value) || *value < min || *value > max) {
    return fmt::format("expected a number in [{}, {}], {}", min, max, got(text));
  }
  return static_cast<double>(*value);
}

Parsed<bool> parse_bool(const std::string& text) {
  if (text == "on" || text == "true" || text == "1") return true;
  if (text == "off" || text == "false" || text == "0") return false;
  return fmt::format("expected on|off (or true|false), {}", got(text));
}

Parsed<std::vector<std::uint32_t>> parse_uint_list(const std::string& text, std::uint64_t min, std::uint64_t max) {
  if (text == "same") return std::vector<std::uint32_t>{};
  std::vector<std::uint32_t> values;
  for (const std::string& part : split(text, ',')) {
    const auto value = whole_uint(part);
    if (!value || *value < min || *value > max) {
      return fmt::format("expected same or a comma-separated list of integers in [{}, {}], {}", min, max, got(text));
    }
    values.push_back(static_cast<std::uint32_t>(*value));
  }
  return values;
}

Parsed<std::size_t> parse_choice(const std::string& text, std::initializer_list<const char*> choices) {
  std::size_t index = 0;
  std::string all;
  for (const char* choice : choices) {
    if (text == choice) return index;
    all += (index++ == 0 ? "" : "|") + std::string(choice);
  }
  return fmt::format("expected {}, {}", all, got(text));
}

Parsed<SkipRule> parse_skip(const std::string& text) {
  const auto parts = split(text, ':');
  SkipRule rule;
  const auto rank = parts.size() >= 2 ? whole_uint(parts[0]) : std::nullopt;
  const auto module = parts.size() >= 2 ? whole_uint(parts[1]) : std::nullopt;
  const auto iter = parts.size() == 3 ? whole_uint(parts[2]) : std::nullopt;
  if (!rank || !module || parts.size() > 3 || (parts.size() == 3 && !iter)) {
    return fmt::format("expected RANK:MODULE[:ITER] (e.g. 3:1 or 3:1:0), {}", got(text));
  }
  rule.rank = static_cast<RankId>(*rank);
  rule.module = static_cast<std::uint32_t>(*module);
  if (iter) rule.iter = static_cast<std::uint32_t>(*iter);
  return rule;
}

Parsed<EvalRule> parse_eval(const std::string& text) {
  const auto parts = split(text, ':');
  const auto module = whole_uint(parts[0]);
  const auto iter = parts.size() == 2 ? whole_uint(parts[1]) : std::nullopt;
  if (!module || parts.size() > 2 || (parts.size() == 2 && !iter)) {
    return fmt::format("expected MODULE[:ITER] (e.g. 1 or 1:0), {}", got(text));
  }
  EvalRule rule;
  rule.module = static_cast<std::uint32_t>(*module);
  if (iter) rule.iter = static_cast<std::uint32_t>(*iter);
  return rule;
}

Parsed<InputRule> parse_input(const std::string& text) {
  const std::string expected = fmt::format(
      "expected RANK:ITER:MODULE:fwd|bwd[:TENSOR]=V[,V...] (e.g. 0:1:2:fwd=inf), {}", got(text));
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos) return expected;
  const auto where = split(text.substr(0, eq), ':');
  if (where.size() != 4 && where.size() != 5) return expected;
  const auto rank = whole_uint(where[0]);
  const auto iter = whole_uint(where[1]);
  const auto module = whole_uint(where[2]);
  const auto tensor = where.size() == 5 ? whole_uint(where[4]) : std::optional<std::uint64_t>(0);
  if (!rank || !iter || !module || !tensor || (where[3] != "fwd" && where[3] != "bwd")) return expected;
  InputRule rule;
  rule.rank = static_cast<RankId>(*rank);
  rule.iter = static_cast<std::uint32_t>(*iter);
  rule.module = static_cast<std::uint32_t>(*module);
  rule.dir = where[3] == "fwd" ? Direction::forward : Direction::backward;
  if (where.size() == 5) rule.tensor = static_cast<std::uint32_t>(*tensor);
  for (const std::string& item : split(text.substr(eq + 1), ',')) {
    const auto value = whole_float(item);
    if (!value) return expected;
    rule.values.push_back(*value);
  }
  return rule;
}

Parsed<std::pair<GroupKind, std::vector<std::vector<RankId>>>> parse_group(const std::string& text) {
  using Result = std::pair<GroupKind, std::vector<std::vector<RankId>>>;
  static constexpr std::pair<const char*, GroupKind> named[] = {
      {"auto", GroupKind::automatic}, {"dp", GroupKind::dp},       {"tp", GroupKind::tp},
      {"tp-dp", GroupKind::tp_dp},    {"world", GroupKind::world},
  };
  for (const auto& [name, kind] : named) {
    if (text == name) return Result{kind, {}};
  }
  const std::string expected = fmt::format(
      "expected auto|dp|tp|tp-dp|world or rank lists like 0,1,2-3/4-7, {}", got(text));
  Result result{GroupKind::explicit_lists, {}};
  for (const std::string& list : split(text, '/')) {
    std::vector<RankId> ranks;
    for (const std::string& item : split(list, ',')) {
      const std::size_t dash = item.find('-');
      const auto first = whole_uint(item.substr(0, dash));
      const auto last = dash == std::string::npos ? first : whole_uint(item.substr(dash + 1));
      if (!first || !last || *last < *first || *last - *first > 1u << 20) return expected;
      for (std::uint64_t r = *first; r <= *last; ++r) ranks.push_back(static_cast<RankId>(r));
    }
    result.second.push_back(std::move(ranks));
  }
  return result;
}

Parsed<std::array<Dim, 4>> parse_order(const std::string& text) {
  const auto parts = split(text, '-');
  std::array<Dim, 4> order{};
  bool seen[4] = {false, false, false, false};
  const std::string expected =
      fmt::format("expected a permutation of tp, cp, dp, pp joined by '-' (fastest first), {}", got(text));
  if (parts.size() != 4) return expected;
  for (std::size_t i = 0; i < 4; ++i) {
    const auto index = parse_choice(parts[i], {"tp", "cp", "dp", "pp"});
    if (!std::holds_alternative<std::size_t>(index)) return expected;
    const std::size_t dim = std::get<std::size_t>(index);
    if (seen[dim]) return expected;
    seen[dim] = true;
    order[i] = static_cast<Dim>(dim);
  }
  return order;
}

std::string show(const SkipRule& rule) {
  return rule.iter ? fmt::format("{}:{}:{}", rule.rank, rule.module, *rule.iter)
                   : fmt::format("{}:{}", rule.rank, rule.module);
}

std::string show(const EvalRule& rule) {
  return rule.iter ? fmt::format("{}:{}", rule.module, *rule.iter) : fmt::format("{}", rule.module);
}

std::string show(const InputRule& rule) {
  std::string text = fmt::format("{}:{}:{}:{}", rule.rank, rule.iter, rule.module,
                                 rule.dir == Direction::forward ? "fwd" : "bwd");
  if (rule.tensor) text += fmt::format(":{}", *rule.tensor);
  text += '=';
  for (std::size_t i = 0; i < rule.values.size(); ++i) {
    text += (i == 0 ? "" : ",") + show_float(rule.values[i]);
  }
  return text;
}

std::string show_group(GroupKind kind, const std::vector<std::vector<RankId>>& lists) {
  switch (kind) {
    case GroupKind::automatic: return "auto";
    case GroupKind::dp: return "dp";
    case GroupKind::tp: return "tp";
    case GroupKind::tp_dp: return "tp-dp";
    case GroupKind::world: return "world";
    case GroupKind::explicit_lists: break;
  }
  std::string text;
  for (std::size_t g = 0; g < lists.size(); ++g) {
    if (g > 0) text += '/';
    for (std::size_t i = 0; i < lists[g].size(); ++i) text += fmt::format("{}{}", i == 0 ? "" : ",", lists[g][i]);
  }
  return text;
}

std::string show_order(const std::array<Dim, 4>& order) {
  static constexpr const char* names[] = {"tp", "cp", "dp", "pp"};
  return fmt::format("{}-{}-{}-{}", names[static_cast<int>(order[0])], names[static_cast<int>(order[1])],
                     names[static_cast<int>(order[2])], names[static_cast<int>(order[3])]);
}

std::string show_float(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{}", value);
}

}  // namespace amaxcheck::knobs
