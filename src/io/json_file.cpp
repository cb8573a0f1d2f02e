#include "io/json_file.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "io/json_text.h"
#include "util/atomic_file.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck {

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  const std::string where = escape_invalid_utf8(path);  // a path need not be UTF-8
  refuse_folder(path, where, fmt::format("a {}", what));
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open {}", where, what));
  std::stringstream text;
  text << file.rdbuf();
  // The limits every reader keeps (nesting, overflowing numbers), and line:column on errors.
  return parse_json_text(text.str(), where);
}

}  // namespace amaxcheck
