#pragma once
/// Hazard reports: what a detector found, with every participant named.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "engine/wait_reason.h"
#include "model/scenario.h"
#include "util/enum_names.h"

namespace amaxcheck {

enum class HazardKind : std::uint8_t {
  data_race,
  collective_mismatch,
  ordering_hazard,
  unjoined_collective,
  deadlock,
  value_mismatch,
  replica_divergence,
};

/// One row per hazard kind: its name in traces and reports, a short label for tables, and what
/// it means. Printed by `amaxcheck hazard-kinds --json`, which the harness reads, so this is
/// the only list of kinds. Adding a kind: an enumerator above, its row here (in order: the
/// build checks), and the detector that reports it.
struct HazardKindInfo {
  HazardKind value;
  const char* name;
  const char* short_name;
  const char* description;
};

// clang-format off
inline constexpr std::array<HazardKindInfo, 7> hazard_kind_table{{
  {HazardKind::data_race,           "data_race",           "race",       "conflicting accesses with no happens-before"},
  {HazardKind::collective_mismatch, "collective_mismatch", "mismatch",   "matched collectives disagree on kind/count/dtype/op/root, or are different ops (by name)"},
  {HazardKind::ordering_hazard,     "ordering_hazard",     "order",      "collectives on one comm issued by unordered host threads"},
  {HazardKind::unjoined_collective, "unjoined_collective", "unjoined",   "a member never issued a collective others wait in"},
  {HazardKind::deadlock,            "deadlock",            "deadlock",   "work remains and nothing can progress"},
  {HazardKind::value_mismatch,      "value_mismatch",      "value",      "a tensor differs from the sequential reference"},
  {HazardKind::replica_divergence,  "replica_divergence",  "divergence", "replicas of a tensor are not bit-identical"},
}};
// clang-format on

template <>
struct EnumNames<HazardKind> {
  static constexpr const auto& table = hazard_kind_table;
};

inline const char* to_string(HazardKind kind) { return enum_name(kind); }
inline std::optional<HazardKind> parse_hazard_kind(std::string_view name) { return parse_enum<HazardKind>(name); }

/// How a participant touched what a race is about; `none` outside races.
enum class Access : std::uint8_t { none, read, write };

template <>
struct EnumNames<Access> {
  static constexpr std::array table{
      EnumName<Access>{Access::none, "none"},
      EnumName<Access>{Access::read, "read"},
      EnumName<Access>{Access::write, "write"}};
};
inline const char* to_string(Access access) { return enum_name(access); }

struct Participant {
  RankId rank = 0;
  std::string lane;    ///< "thread main", "stream compute"
  OpRef op;
  std::string op_name;
  std::string origin;  ///< the op's origin in the scenario
  std::size_t step = 0;
  Access access = Access::none;  ///< races: the earlier and the later access (RAW = write, read)
  /// Deadlocks: why it is stuck (Stuck::reasons); an unjoined collective's issuer: why each
  /// member that never issued it did not (its program still holds it, or not). Not written to
  /// traces: a shrink's "same bug" reads it from its own runs.
  std::vector<WaitReason> waits = {};
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
