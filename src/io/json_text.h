#pragma once
/// Parsing JSON text from a file, with the limits every reader keeps.
///
/// A SAX pre-pass checks the text before the document is built, so nothing malformed reaches
/// code that could misbehave on it (a recursive dump of a 200,000-deep array overflows the
/// stack; nlohmann's out_of_range.406 carries no position). Every failure is an InputError
/// "<where>:<line>:<column>: ..." that names the field when there is one:
/// - a syntax error: "invalid JSON: <what>";
/// - a number beyond a double (1e400): "field 'knobs.dp': number 1e400 overflows a double";
/// - nesting deeper than max_json_depth: "field 'a[0][0]...': nested deeper than 64 levels".

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace amaxcheck {

/// The deepest nesting a scenario or trace line may have. The deepest valid scenario nests 8
/// levels (ranks[].threads[].program[].reads[]), a trace line embeds one (scenario) more; the
/// limit leaves room for hand-written files and is fixed (no option raises it).
inline constexpr std::size_t max_json_depth = 64;

/// Throws InputError when `text` is not JSON a reader may parse (see above). `first_line` is
/// the line number of the text's first line in its file (a trace parses one line at a time).
void check_json_text(std::string_view text, const std::string& where, std::size_t first_line = 1);

/// check_json_text, then the document.
template <typename Json = nlohmann::json>
Json parse_json_text(std::string_view text, const std::string& where, std::size_t first_line = 1) {
  check_json_text(text, where, first_line);
  return Json::parse(text);
}

}  // namespace amaxcheck
