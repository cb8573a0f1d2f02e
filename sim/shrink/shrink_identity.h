#pragma once
/// What makes a shrink candidate's hazard the *same bug* as the original one (STYLE 16:
/// Hypothesis keeps a failure's "interesting origin" and rejects a smaller example that fails
/// differently, "slippage").
///
/// A hazard's identity is stated in the original scenario's terms, mapping the candidate's
/// ranks and ops back through the reduction's Lineage, and holds:
/// - the kind and the subject (the buffer, tensor or communicator it is about);
/// - the participating ops, by original op: for a race in order (earlier, later) with how
///   each touched the buffer, so a RAW never passes for a WAR between the same two ops; for
///   the other kinds as a set (a collective mismatch keeps its pair, an unjoined collective
///   its issuer and the ranks that never issued it);
/// - for a deadlock, whether it is a wait-for cycle, so a cycle never becomes a hang, and why
///   each stuck op waits (Participant::waits, with the ranks and ops in the way), so a member
///   that has not issued a collective yet never becomes one whose program lost it;
/// - for a value hazard, the op that last wrote each checked range (its producer) and the
///   range's final values, so the wrong value is the same one and still comes from the same
///   op (a run with no ops left, whose buffers keep their initial values, never passes).
/// Hazard::key() identifies a hazard within one scenario; this compares across reductions.

#include <string>
#include <vector>

#include "detectors/hazard.h"
#include "scheduler/run.h"
#include "shrink/scenario_reduce.h"

namespace amaxcheck::sched {

struct HazardIdentity {
  HazardKind kind = HazardKind::data_race;
  std::string subject;
  bool cycle = false;                     ///< deadlock: a wait-for cycle rather than a hang
  std::vector<std::string> participants;  ///< in the original's terms; ordered for races, else sorted
  std::vector<std::string> producers;     ///< value hazards: last writer and final values of each checked range, sorted

  friend bool operator==(const HazardIdentity&, const HazardIdentity&) = default;
  /// One line for reports: "data_race on amax_fwd: rank 0 ... write, then rank 0 ... read".
  std::string show() const;
};

/// Whether identity_of needs the run's steps for `kind` (value hazards find their producers
/// in them); a shrinker records steps only then.
bool identity_needs_steps(HazardKind kind);

/// `options`, plus what a run must record for identity_of to state the identity of a hazard
/// of `kind` (value hazards: every step, with every value it writes).
RunOptions identity_options(RunOptions options, HazardKind kind);

/// The identity of `hazard`, found in `run` of the reduced `scenario` whose parts came from
/// the original as `lineage` says. A value hazard's run must have run under identity_options.
HazardIdentity identity_of(const Hazard& hazard, const Scenario& scenario, const Lineage& lineage, const RunResult& run);

/// Whether `run` of the reduced `scenario` shows a hazard with the identity `original`.
bool same_bug(const HazardIdentity& original, const Scenario& scenario, const Lineage& lineage, const RunResult& run);

/// The hazard of `run` that has the identity `original`, or nullptr.
const Hazard* find_same_bug(const HazardIdentity& original, const Scenario& scenario, const Lineage& lineage,
                            const RunResult& run);

}  // namespace amaxcheck::sched
