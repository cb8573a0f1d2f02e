#include "detectors/hazard.h"

#include <fmt/format.h>

#include <algorithm>

namespace amaxcheck {

const char* to_string(HazardKind kind) {
  switch (kind) {
    case HazardKind::data_race: return "data_race";
    case HazardKind::collective_mismatch: return "collective_mismatch";
    case HazardKind::ordering_hazard: return "ordering_hazard";
    case HazardKind::unjoined_collective: return "unjoined_collective";
    case HazardKind::deadlock: return "deadlock";
    case HazardKind::value_mismatch: return "value_mismatch";
    case HazardKind::replica_divergence: return "replica_divergence";
  }
  return "?";
}

const char* to_string(Access access) {
  switch (access) {
    case Access::none: return "none";
    case Access::read: return "read";
    case Access::write: return "write";
  }
  return "?";
}

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
