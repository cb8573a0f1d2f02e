#pragma once
/// Hazard reports: what a detector found, with every participant named.

#include <cstddef>
#include <string>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck {

enum class HazardKind : std::uint8_t {
  data_race,            ///< conflicting accesses with no happens-before
  collective_mismatch,  ///< matched collectives disagree on kind/count/dtype/op/root
  ordering_hazard,      ///< collectives on one comm issued by unordered host threads
  unjoined_collective,  ///< a member never issued a collective others wait in
  deadlock,             ///< work remains and nothing can progress
  value_mismatch,       ///< a tensor differs from the sequential reference
  replica_divergence,   ///< replicas of a tensor are not bit-identical
};

const char* to_string(HazardKind kind);

struct Participant {
  RankId rank = 0;
  std::string lane;    ///< "thread main", "stream compute"
  OpRef op;
  std::string op_name;
  std::string origin;  ///< the op's origin in the scenario
  std::size_t step = 0;
};

struct Hazard {
  HazardKind kind = HazardKind::data_race;
  std::string summary;  ///< one line, e.g. "RAW on rank 0 buffer amax_fwd[0..4)"
  std::vector<Participant> participants;
  std::vector<std::string> details;  ///< further lines (wait-for cycle, values, ...)

  /// Deduplication key: kind plus participants' (rank, op) pairs, independent of steps.
  std::string key() const;
};

}  // namespace amaxcheck
