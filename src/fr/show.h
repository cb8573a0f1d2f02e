#pragma once
/// How the import's findings spell ranks, shapes and long text. The words are those the
/// report has always used (the Python importer's): lists as Python prints them, so a shape in a
/// finding reads as it does in the record listing.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fr/dump.h"

namespace amaxcheck::fr {

/// Sorted ranks with runs folded: "0, 2-5, 9" (a run of two is "3, 4").
std::string ranks_text(std::vector<std::int64_t> ranks);

/// `text` for a report: at most max_text code points, and then a note of its length.
std::string cut(std::string_view text);

/// A list of ints as Python prints it: "[0, 1]".
std::string python_list(const std::vector<std::int64_t>& items);
/// A list of shapes as Python prints it: "[[8, 4], [2]]".
std::string python_list(const std::vector<Shape>& shapes);

}  // namespace amaxcheck::fr
