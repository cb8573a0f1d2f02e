#pragma once
/// Reading a TOML document from a file as the JSON document it stands for, so every format that
/// is read from JSON (suite files) can be written in TOML too and is checked by the same code.
///
/// Tables become objects, arrays arrays, strings, integers, floats and booleans themselves.
/// TOML dates and times have no meaning in any of our formats and are refused. The same limits
/// as JSON hold: nesting deeper than max_json_depth (io/json_text.h) is refused before the
/// parser (which recurses) sees it. Every failure is an InputError naming the file and line.

#include <nlohmann/json.hpp>
#include <string>

namespace amaxcheck {

/// InputError "PATH: cannot open WHAT", "PATH:LINE: invalid TOML: ...", or
/// "PATH: field 'a.b': ..." for a value with no JSON counterpart.
nlohmann::json read_toml_file(const std::string& path, const std::string& what);

}  // namespace amaxcheck
