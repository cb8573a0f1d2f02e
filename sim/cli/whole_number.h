#pragma once
/// The check of an option that holds a count or a seed (an unsigned 64-bit integer).
///
/// CLI11 reads such an option with strtoull, which takes "-1" as 2^64 - 1 and saturates what
/// overflows: `--runs -1` would run until killed, and `--seed -1` and `--seed 2^64` would be the
/// same seed. This check sees the text first and refuses both, naming the option (exit 2).

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <string>

namespace amaxcheck::cli {

inline CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && end == text.data() + text.size()) return {};
        return "expected a whole number from 0 to 18446744073709551615, got \"" + text + "\"";
      },
      "UINT");
}

}  // namespace amaxcheck::cli
