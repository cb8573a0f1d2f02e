#pragma once
/// Reading a JSON document from a file, for every file format of the project (scenarios,
/// suites): a syntax error names the file, line and column, so an editor can jump there.

#include <nlohmann/json.hpp>
#include <string>

namespace amaxcheck {

/// Parses the file at `path` through parse_json_text (io/json_text.h: nesting limit, numbers
/// beyond a double); InputError "PATH: cannot open WHAT" or "PATH:LINE:COL: invalid JSON: ...".
/// `what` names the kind of file ("scenario file"); a path that is not UTF-8 is printed escaped.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace amaxcheck
