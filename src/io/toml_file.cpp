#include "io/toml_file.h"

#include <cpptoml.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "io/json_text.h"
#include "util/atomic_file.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck {
namespace {

/// The line of the first bracket or brace that nests deeper than max_json_depth, or of the
/// first key or table header of more parts than that (`a.b.c = 1`, `[a.b.c]`: each part a table
/// inside the last), or 0. cpptoml builds and frees such tables recursively, so a key of 400,000
/// parts overflows the stack before any other check could see it. Strings and comments are
/// skipped, so a "[" or a "." inside a string does not count; a dot in a value (1.5) is not a
/// key's.
std::size_t line_nested_too_deep(std::string_view text) {
  std::vector<char> open;  // the brackets and braces around the text being read
  std::size_t line = 1;
  bool key = true;         // reading a key or a header: at a line's start, or after { or , in { }
  std::size_t parts = 1;   // of the key being read
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      if (open.empty()) {
        key = true;
        parts = 1;
      }
    } else if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      // Basic strings take backslash escapes, literal ones do not; either may be tripled
      // (multi-line), and then only the tripled quote ends it.
      const std::string close(text.substr(i, 3) == std::string(3, c) ? 3 : 1, c);
      i += close.size();
      while (i < text.size() && text.substr(i, close.size()) != close) {
        if (text[i] == '\n') ++line;
        if (c == '"' && text[i] == '\\') ++i;
        ++i;
      }
      i += close.size() - 1;
    } else if (c == '.' && key) {
      if (++parts > max_json_depth) return line;
    } else if (c == '=') {
      key = false;
    } else if (c == '[' || c == '{') {
      // A header's own brackets ([a.b], [[a.b]]) keep reading its key.
      if (open.size() + 1 > max_json_depth) return line;
      open.push_back(c);
      if (c == '{') {
        key = true;
        parts = 1;
      }
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    } else if (c == ',' && !open.empty() && open.back() == '{') {
      key = true;
      parts = 1;
    }
  }
  return 0;
}

// cpptoml's accessors are not const (they hand out shared_ptrs to the node itself).
nlohmann::json json_of(cpptoml::base& value, const std::string& field, const std::string& where, std::size_t depth);

/// `depth`: the tables and arrays around this one. Bounded as a JSON document's nesting is:
/// dotted keys and headers (`a.b.c = 1`, `[a.b.c]`) nest tables without a bracket, so the text's
/// bracket count alone does not bound the recursion.
nlohmann::json json_of_table(const cpptoml::table& table, const std::string& field, const std::string& where,
                             std::size_t depth) {
  if (depth > max_json_depth) {
    throw InputError(fmt::format("{}: field '{}': tables nested deeper than {} levels", where, field, max_json_depth));
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : table) {
    out[key] = json_of(*value, field.empty() ? key : field + "." + key, where, depth + 1);
  }
  return out;
}

nlohmann::json json_of(cpptoml::base& value, const std::string& field, const std::string& where, std::size_t depth) {
  if (value.is_table()) return json_of_table(*value.as_table(), field, where, depth);
  if (depth > max_json_depth) {
    throw InputError(fmt::format("{}: field '{}': nested deeper than {} levels", where, field, max_json_depth));
  }
  if (value.is_table_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& table : value.as_table_array()->get()) {
      out.push_back(json_of_table(*table, fmt::format("{}[{}]", field, out.size()), where, depth + 1));
    }
    return out;
  }
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value.as_array()->get()) {
      out.push_back(json_of(*item, fmt::format("{}[{}]", field, out.size()), where, depth + 1));
    }
    return out;
  }
  if (const auto s = value.as<std::string>()) return s->get();
  if (const auto i = value.as<int64_t>()) return i->get();
  if (const auto d = value.as<double>()) return d->get();
  if (const auto b = value.as<bool>()) return b->get();
  throw InputError(fmt::format("{}: field '{}': expected a string, number, boolean, array or table, not a TOML date or time",
                               where, field));
}

}  // namespace

nlohmann::json read_toml_file(const std::string& path, const std::string& what) {
  const std::string where = escape_invalid_utf8(path);  // a path need not be UTF-8
  refuse_folder(path, where, fmt::format("a {}", what));
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open {}", where, what));
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string text = buffer.str();
  // TOML text is UTF-8 (the JSON reader holds its files to the same); cpptoml does not check,
  // and a string that is not would fail only when printed or written as JSON.
  if (const std::size_t at = invalid_utf8_at(text); at != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    throw InputError(fmt::format("{}:{}: not UTF-8 text (byte {} of the file); TOML files are UTF-8", where, line, at));
  }
  if (const std::size_t line = line_nested_too_deep(text)) {
    throw InputError(fmt::format("{}:{}: nested deeper than {} levels", where, line, max_json_depth));
  }
  std::istringstream stream(text);
  std::shared_ptr<cpptoml::table> table;
  try {
    table = cpptoml::parser(stream).parse();
  } catch (const cpptoml::parse_exception& e) {
    // cpptoml says "<what> at line N"; lead with the line as every other reader does.
    const std::string message = e.what();
    const std::size_t at = message.rfind(" at line ");
    if (at == std::string::npos) throw InputError(fmt::format("{}: invalid TOML: {}", where, message));
    throw InputError(fmt::format("{}:{}: invalid TOML: {}", where, message.substr(at + 9), message.substr(0, at)));
  }
  return json_of_table(*table, "", where, 0);
}

}  // namespace amaxcheck
