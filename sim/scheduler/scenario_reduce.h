#pragma once
/// Scenario reductions for shrinking: each returns a smaller, still well-formed scenario, or
/// nothing when the reduction would break it (e.g. dropping a broadcast's root).
///
/// - drop_rank removes a rank, its membership in every communicator and every replica check
///   of it, and renumbers the ranks after it;
/// - keep_ops keeps only the listed ops of every program (in order);
/// - origin_groups lists the "iter N", "module N", "microbatch N" ... segments of op origins
///   ("iter 1 / module 3 / forward copy-back"), so a whole iteration or module can be dropped
///   on every rank at once, which keeps the collectives matched.

#include <optional>
#include <string>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck::sched {

std::optional<Scenario> drop_rank(const Scenario& scenario, RankId rank);

/// Every op of the scenario, in rank, thread, program order.
std::vector<OpRef> all_ops(const Scenario& scenario);
/// The scenario with only `kept` ops (a subsequence of all_ops) left in the programs.
Scenario keep_ops(const Scenario& scenario, const std::vector<OpRef>& kept);

/// Segments of op origins that name a group spanning ranks (sorted, distinct).
std::vector<std::string> origin_groups(const Scenario& scenario);
/// The scenario without the ops whose origin has `group` as one of its " / " segments.
Scenario drop_origin_group(const Scenario& scenario, const std::string& group);

std::size_t op_count(const Scenario& scenario);

}  // namespace amaxcheck::sched
