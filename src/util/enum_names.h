#pragma once
/// One name table per enum, and the generic print / parse / list that read it.
///
/// An enum `E` gets its names by specializing `EnumNames<E>` next to its declaration:
///
///     template <> struct EnumNames<ReduceOp> {
///       static constexpr std::array table{EnumName<ReduceOp>{ReduceOp::max, "max"}, ...};
///     };
///
/// The table lists every enumerator in declaration order, starting at 0; `enum_name` checks that
/// at compile time (entry i must hold enumerator i), so a reorder or an enumerator added in the
/// middle fails to build instead of shifting names. A table may be any array of entries with
/// `value` and `name` members (the op-kind table carries more columns).

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace amaxcheck {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

/// Specialize with `static constexpr <array of entries> table`.
template <typename E>
struct EnumNames;

template <typename E>
constexpr bool enum_names_in_order() {
  const auto& table = EnumNames<E>::table;
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (static_cast<std::size_t>(table[i].value) != i) return false;
  }
  return true;
}

/// The name of `value`; "?" for a value outside the table (a cast from a bad integer).
template <typename E>
constexpr const char* enum_name(E value) {
  static_assert(enum_names_in_order<E>(), "EnumNames<E>::table must list the enumerators in declaration order");
  const auto& table = EnumNames<E>::table;
  const auto i = static_cast<std::size_t>(value);
  return i < table.size() ? table[i].name : "?";
}

/// The enumerator named `text`, if any.
template <typename E>
constexpr std::optional<E> parse_enum(std::string_view text) {
  for (const auto& entry : EnumNames<E>::table) {
    if (text == entry.name) return entry.value;
  }
  return std::nullopt;
}

/// Every name, in declaration order, joined by `separator` ("max|sum", "data_race, deadlock").
template <typename E>
std::string enum_name_list(std::string_view separator) {
  std::string all;
  for (const auto& entry : EnumNames<E>::table) {
    if (!all.empty()) all += separator;
    all += entry.name;
  }
  return all;
}

/// Every enumerator, in declaration order: `for (E value : enum_values<E>())`.
template <typename E>
constexpr auto enum_values() {
  std::array<E, EnumNames<E>::table.size()> values{};
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = EnumNames<E>::table[i].value;
  return values;
}

}  // namespace amaxcheck
