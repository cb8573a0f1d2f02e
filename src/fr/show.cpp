#include "fr/show.h"

#include <fmt/format.h>

#include <algorithm>

#include "fr/describe.h"

namespace amaxcheck::fr {

std::string ranks_text(std::vector<std::int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i + 1;
    while (j < ranks.size() && ranks[j] == ranks[j - 1] + 1) ++j;
    if (!out.empty()) out += ", ";
    const std::size_t run = j - i;
    if (run == 1) out += fmt::format("{}", ranks[i]);
    else if (run == 2) out += fmt::format("{}, {}", ranks[i], ranks[i + 1]);
    else out += fmt::format("{}-{}", ranks[i], ranks[j - 1]);
    i = j;
  }
  return out;
}

std::string cut(std::string_view text) {
  if (text.size() <= max_text) return std::string(text);  // bytes bound code points
  const std::size_t n = count_code_points(text);
  if (n <= max_text) return std::string(text);
  return fmt::format("{}... ({} chars)", prefix_code_points(text, max_text), n);
}

std::string python_list(const std::vector<std::int64_t>& items) { return fmt::format("[{}]", fmt::join(items, ", ")); }

std::string python_list(const std::vector<Shape>& shapes) {
  std::string out = "[";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (i) out += ", ";
    out += python_list(shapes[i]);
  }
  return out + "]";
}

}  // namespace amaxcheck::fr
