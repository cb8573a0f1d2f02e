#include "detectors/hazard.h"

#include <fmt/format.h>

#include <algorithm>

namespace amaxcheck {

std::string Hazard::key() const {
  std::vector<std::string> parts;
  for (const Participant& p : participants) {
    parts.push_back(fmt::format("{}:{}:{}:{}", p.rank, p.op.thread, p.op.index, p.op_name));
  }
  std::sort(parts.begin(), parts.end());
  parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  return fmt::format("{}|{}|{}", to_string(kind), subject, fmt::join(parts, ","));
}

}  // namespace amaxcheck
