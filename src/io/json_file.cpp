#include "io/json_file.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "util/check.h"

namespace amaxcheck {

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open {}", path, what));
  std::stringstream text;
  text << file.rdbuf();
  const std::string content = text.str();
  try {
    return nlohmann::json::parse(content);
  } catch (const nlohmann::json::parse_error& e) {
    // Turn the byte offset into line:column so an editor can jump there.
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < content.size(); ++i) {
      if (content[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string message = e.what();
    const std::size_t colon = message.find(": ", message.find("parse error"));
    if (colon != std::string::npos) message = message.substr(colon + 2);
    throw InputError(fmt::format("{}:{}:{}: invalid JSON: {}", path, line, column, message));
  }
}

}  // namespace amaxcheck
