#pragma once
/// Parsing and printing of knob values: the small textual formats the knobs accept.
///
/// Every parser returns either the value or what was expected, so the caller can prefix the
/// knob's name (command line) or field path (scenario file) and raise one InputError.

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <string>
#include <variant>
#include <vector>

#include "protocols/protocol.h"

namespace amaxcheck::knobs {

/// A parsed value or the reason it was rejected ("expected ..., got ...").
template <typename T>
using Parsed = std::variant<T, std::string>;

Parsed<std::uint64_t> parse_uint(const std::string& text, std::uint64_t min, std::uint64_t max);
Parsed<int> parse_int(const std::string& text, int min, int max);
Parsed<double> parse_double(const std::string& text, double min, double max);
Parsed<bool> parse_bool(const std::string& text);
/// "same" (an empty list) or "N,N,..." with each N in min..max.
Parsed<std::vector<std::uint32_t>> parse_uint_list(const std::string& text, std::uint64_t min, std::uint64_t max);
/// Index of `text` in `choices`.
Parsed<std::size_t> parse_choice(const std::string& text, std::initializer_list<const char*> choices);

/// "RANK:MODULE[:ITER]"
Parsed<SkipRule> parse_skip(const std::string& text);
/// "MODULE[:ITER]"
Parsed<EvalRule> parse_eval(const std::string& text);
/// "RANK:ITER:MODULE:fwd|bwd[:TENSOR]=V[,V...]"
Parsed<InputRule> parse_input(const std::string& text);
/// "auto|dp|tp|tp-dp|world" or explicit lists "0,1,2-3/4-7" (groups separated by '/').
Parsed<std::pair<GroupKind, std::vector<std::vector<RankId>>>> parse_group(const std::string& text);
/// A permutation of tp, cp, dp, pp joined by '-', fastest first: "tp-cp-dp-pp".
Parsed<std::array<Dim, 4>> parse_order(const std::string& text);

std::string show(const SkipRule& rule);
std::string show(const EvalRule& rule);
std::string show(const InputRule& rule);
std::string show_group(GroupKind kind, const std::vector<std::vector<RankId>>& lists);
std::string show_order(const std::array<Dim, 4>& order);
/// Shortest text that reads back as the same float.
std::string show_float(float value);

}  // namespace amaxcheck::knobs
