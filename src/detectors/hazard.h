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

/// How a participant touched what a race is about; `none` outside races.
enum class Access : std::uint8_t { none, read, write };

const char* to_string(Access access);

struct Participant {
  RankId rank = 0;
  std::string lane;    ///< "thread main", "stream compute"
  OpRef op;
  std::string op_name;
  std::string origin;  ///< the op's origin in the scenario
  std::size_t step = 0;
  Access access = Access::none;  ///< races: the earlier and the later access (RAW = write, read)
};

struct Hazard {
  HazardKind kind = HazardKind::data_race;
  /// What the hazard is about, the name reports group by: the buffer of a race, the tensor
  /// (ReplicaCheck::tensor) of a value hazard, "comm NAME" of a collective hazard; empty when
  /// it is about no one thing (a deadlock).
  std::string subject;
  std::string summary;  ///< one line, e.g. "RAW on rank 0 buffer amax_fwd[0..4)"
  std::vector<Participant> participants;
  std::vector<std::string> details;  ///< further lines (wait-for cycle, values, ...)

  /// The hazard's identity, for deduplication within a run and across the runs of an
  /// exploration: kind, subject, and the participants' (rank, op) pairs. Trace steps are left
  /// out, so the same bug reached by two schedules has one key, while the same kind of bug on
  /// two tensors (or between two other ops) has two.
  std::string key() const;
};

}  // namespace amaxcheck
