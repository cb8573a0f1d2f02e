#pragma once
/// How the validator's messages show a value: short, bounded, in Python's words (the messages
/// read as the Python importer's did, and users know Python's type names from the dumps).

#include <string>
#include <string_view>

#include "fr/document.h"

namespace amaxcheck::fr {

/// A short description of any node, without walking it (it may be huge or nested deeply):
/// "a list of 3", "'nccl:all_re...'", "-1".
std::string short_value(const Document& doc, NodeId id);

/// The first `n` code points of well-formed UTF-8 `text`.
std::string_view prefix_code_points(std::string_view text, std::size_t n);
/// The number of code points of well-formed UTF-8 `text`.
std::size_t count_code_points(std::string_view text);

}  // namespace amaxcheck::fr
