#pragma once
/// The window of each group kept in the scenario the import writes for replay, so that the
/// simulated part stays small however big the job: per group, the last `window` collectives up
/// to and including its first divergence (an order inversion counts for both its groups), or up
/// to its last collective when it has none; the same seqs on every member, so the k-th
/// collectives the simulator pairs are the same ones.

#include <cstdint>
#include <utility>
#include <vector>

#include "fr/agreement.h"

namespace amaxcheck::fr {

struct ScenarioWindow {
  std::vector<std::pair<std::int64_t, std::int64_t>> seqs;  // per group (Alignment order): first, last kept
  std::vector<std::vector<std::uint32_t>> kept;             // per dump: the records kept, in record order
};

ScenarioWindow scenario_window(const Job& job, const Alignment& alignment, const AgreementReport& report,
                               std::int64_t window);

}  // namespace amaxcheck::fr
