#pragma once
/// Scenario reductions for shrinking: each returns a smaller, still well-formed scenario, or
/// nothing when the reduction would break it (e.g. dropping a broadcast's root), together with
/// its Lineage: where each remaining rank, op and replica check came from in the original.
///
/// - drop_rank removes a rank, its membership in every communicator and every replica check
///   of it, the sends and recvs paired with it, and renumbers the ranks after it and the member
///   indices after its (broadcast roots, send / recv peers); nothing when it is a broadcast's root;
/// - keep_ops keeps only the listed ops of every program (in order);
/// - origin_groups lists the "iter N", "module N", "microbatch N" ... segments of op origins
///   ("iter 1 / module 3 / forward copy-back"), so a whole iteration or module can be dropped
///   on every rank at once, which keeps the collectives matched;
/// - keep_checks keeps only the listed replica checks.
///
/// Threads, streams, events, buffers, host flags and communicators are never dropped, so on a
/// mapped rank they keep their indices and names; only ranks, ops and checks need a map.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck::sched {

/// Where the parts of a reduced scenario came from in the original one.
struct Lineage {
  std::vector<RankId> ranks;  ///< reduced rank -> original rank
  /// [reduced rank][thread][index] -> index of the op in the same thread of the original rank
  std::vector<std::vector<std::vector<std::uint32_t>>> ops;
  std::vector<std::size_t> checks;  ///< reduced replica check -> original check

  /// The lineage of an unreduced scenario: every part maps to itself.
  static Lineage identity(const Scenario& scenario);
  /// The original op of a reduced one (which must exist in the reduced scenario).
  OpRef original(const OpRef& reduced) const;
};

/// A reduced scenario and where its parts came from.
struct Reduced {
  Scenario scenario;
  Lineage lineage;
};

/// `scenario` itself, unreduced.
Reduced unreduced(const Scenario& scenario);

std::optional<Reduced> drop_rank(const Reduced& from, RankId rank);

/// Every op of the scenario, in rank, thread, program order.
std::vector<OpRef> all_ops(const Scenario& scenario);
/// Only the `kept` ops (a subsequence of all_ops) left in the programs.
Reduced keep_ops(const Reduced& from, const std::vector<OpRef>& kept);

/// Segments of op origins that name a group spanning ranks (sorted, distinct).
std::vector<std::string> origin_groups(const Scenario& scenario);
/// Without the ops whose origin has `group` as one of its " / " segments.
Reduced drop_origin_group(const Reduced& from, const std::string& group);

/// Only the `kept` replica checks (indices into from.scenario.checks, in order).
Reduced keep_checks(const Reduced& from, const std::vector<std::size_t>& kept);

}  // namespace amaxcheck::sched
