#pragma once
/// A path or argument written into a command a person copies into a shell (a hazard report's
/// replay command): as it is when the shell reads it back unchanged, else quoted.

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "util/utf8.h"

namespace amaxcheck {

inline std::string shell_word(std::string_view text) {
  constexpr std::string_view plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=+,@%";
  if (!text.empty() && text.find_first_not_of(plain) == std::string_view::npos) return std::string(text);
  if (invalid_utf8_at(text) == std::string_view::npos) {
    // Inside single quotes only the quote itself needs care: close, write it escaped, reopen.
    std::string quoted = "'";
    for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  }
  // Bytes that are not UTF-8 (a file name is bytes) as bash's and zsh's $'\xNN', so that the
  // command stays text that prints and goes into JSON.
  std::string quoted = "$'";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\\') quoted += std::string("\\") + c;
    else if (byte < 0x20 || byte >= 0x7f) quoted += fmt::format("\\x{:02x}", byte);
    else quoted += c;
  }
  return quoted + "'";
}

}  // namespace amaxcheck
