#pragma once
/// Reading a JSON document from a file, for every file format of the project (scenarios,
/// suites): a syntax error names the file, line and column, so an editor can jump there.

#include <nlohmann/json.hpp>
#include <string>

namespace amaxcheck {

/// Parses the file at `path`; InputError "PATH: cannot open WHAT" or "PATH:LINE:COL: invalid
/// JSON: ...". `what` names the kind of file ("scenario file").
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace amaxcheck
