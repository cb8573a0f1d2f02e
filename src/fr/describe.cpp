#include "fr/describe.h"

#include <fmt/format.h>

#include "util/utf8.h"

namespace amaxcheck::fr {

const char* python_type_name(Kind kind) {
  switch (kind) {
    case Kind::none: return "NoneType";
    case Kind::boolean: return "bool";
    case Kind::integer: case Kind::big_integer: return "int";
    case Kind::real: return "float";
    case Kind::text: return "str";
    case Kind::list: return "list";
    case Kind::tuple: return "tuple";
    case Kind::dict: return "dict";
  }
  return "?";
}

std::string_view prefix_code_points(std::string_view text, std::size_t n) {
  std::size_t at = 0;
  for (std::size_t seen = 0; at < text.size() && seen < n; ++seen) {
    ++at;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  }
  return text.substr(0, at);
}

std::size_t count_code_points(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string short_value(const Document& doc, NodeId id) {
  const Node& node = doc[id];
  std::string text;
  switch (node.kind) {
    case Kind::list: case Kind::tuple: return fmt::format("a {} of {}", python_type_name(node.kind), node.items.size());
    case Kind::dict: return fmt::format("a dict of {}", node.items.size() / 2);
    case Kind::none: return "None";
    case Kind::boolean: return node.truth ? "True" : "False";
    case Kind::integer: text = fmt::format("{}", node.integer); break;
    case Kind::big_integer: return node.truth ? "an integer below -2^63" : "an integer beyond 2^63-1";
    case Kind::real: text = fmt::format("{}", node.real); break;
    case Kind::text: {
      // Not validated yet: cut by bytes, then show what is not UTF-8 as \xNN.
      const std::string shown = escape_invalid_utf8(node.text.substr(0, 60));
      text = "'" + std::string(prefix_code_points(shown, 60)) + "'";
      break;
    }
  }
  return count_code_points(text) <= 40 ? text : std::string(prefix_code_points(text, 37)) + "...";
}

}  // namespace amaxcheck::fr
