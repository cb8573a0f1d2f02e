// Property 4: what must hold comes from the layout, not from the design under test. For
// generated layouts (TP, CP, DP, PP and their order) and every kind of `--group` (the named
// ones, the correct partition spelt out, and arbitrary partitions), a race-free protocol is
// clean if and only if every amax group is exactly a set of ranks that share their tensors:
// - delayed scaling: the ranks of one pipeline stage (TP/CP shards and DP replicas);
// - current scaling: the TP ranks of one DP index, CP index and stage (one tensor's shards).
// A group that leaves a sharer out diverges or mismatches; one that takes in a rank that does
// not share the tensor mixes values the reference does not.
//
// The expected partition is computed here from rank coordinates, independently of
// protocols/sharing.h, which the checks under test are built from.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "failure_report.h"
#include "observed_run.h"
#include "protocols/layout.h"

namespace amaxcheck::props {
namespace {

using Partition = std::vector<std::vector<RankId>>;

/// The ranks that must agree, grouped by the coordinates they must have in common.
Partition must_agree(const ProtocolKnobs& k) {
  const Layout layout(k);
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<RankId>> by_key;
  for (RankId r = 0; r < layout.world(); ++r) {
    const Coord c = layout.coord(r);
    const bool current = k.protocol == ProtocolName::current_scaling;
    by_key[{c.pp, current ? c.dp : 0, current ? c.cp : 0}].push_back(r);
  }
  Partition out;
  for (auto& [key, ranks] : by_key) out.push_back(ranks);
  std::sort(out.begin(), out.end());
  return out;
}

Partition sorted(Partition p) {
  for (auto& g : p) std::sort(g.begin(), g.end());
  std::sort(p.begin(), p.end());
  return p;
}

/// `lo..hi-1`, uniform at every size (inRange alone starts small: mostly one-rank layouts).
std::uint32_t any_of(std::uint32_t lo, std::uint32_t hi) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::uint32_t>(lo, hi));
}

/// A layout of at most 8 ranks in a random order.
void gen_layout(ProtocolKnobs& k) {
  k.tp = any_of(1, 3);
  k.cp = any_of(1, 3);
  k.pp = any_of(1, 3);
  k.dp = any_of(1, 8 / (k.tp * k.cp * k.pp) + 1);
  std::array<Dim, 4> order = {Dim::tp, Dim::cp, Dim::dp, Dim::pp};
  const auto shuffle = any_of(0, 24);
  for (std::uint32_t i = 0; i < shuffle; ++i) std::next_permutation(order.begin(), order.end());
  k.order = order;
}

/// Every kind of group: named, the correct partition spelt out, a copy with one rank moved,
/// or any partition at all.
void gen_group(ProtocolKnobs& k) {
  const std::uint32_t world = k.tp * k.cp * k.dp * k.pp;
  const std::uint32_t choice = any_of(0, 5);  // 3 and 4: any partition
  if (choice == 0) {
    k.group = *rc::gen::element(GroupKind::automatic, GroupKind::dp, GroupKind::tp, GroupKind::tp_dp, GroupKind::world);
    return;
  }
  Partition groups;
  if (choice == 1 || choice == 2) {
    groups = must_agree(k);
    if (choice == 2 && world > 1) {
      const RankId moved = any_of(0, world);
      const std::size_t to = any_of(0, static_cast<std::uint32_t>(groups.size()) + 1);
      for (auto& g : groups) std::erase(g, moved);
      if (to == groups.size()) groups.push_back({moved});
      else groups[to].push_back(moved);
    }
  } else {
    std::vector<std::uint32_t> labels;
    for (RankId r = 0; r < world; ++r) labels.push_back(any_of(0, world));
    std::map<std::uint32_t, std::vector<RankId>> by_label;
    for (RankId r = 0; r < world; ++r) by_label[labels[r]].push_back(r);
    for (auto& [label, ranks] : by_label) groups.push_back(ranks);
  }
  std::erase_if(groups, [](const auto& g) { return g.empty(); });
  k.group = GroupKind::explicit_lists;
  k.explicit_groups = sorted(groups);
}

rc::Gen<ProtocolCase> group_case() {
  return rc::gen::exec([] {
    ProtocolCase c;
    ProtocolKnobs& k = c.knobs;
    k.protocol = *rc::gen::element(ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling);
    k.comm = CommChoice::separate;
    k.wait = WaitPoint::before_copy;
    gen_layout(k);
    gen_group(k);
    k.modules = *rc::gen::inRange<std::uint32_t>(1, 3);
    k.iters = *rc::gen::inRange<std::uint32_t>(1, 3);
    k.microbatches = *rc::gen::inRange<std::uint32_t>(1, 3);
    k.history = *rc::gen::inRange<std::uint32_t>(1, 3);
    k.elems = *rc::gen::inRange<std::uint32_t>(2, 5);
    // Several independent tensors per module: a wrong group whose maxima happen to tie on
    // one tensor cannot tie on all of them.
    k.fwd_tensors = 2;
    k.bwd_tensors = 2;
    k.buckets = 1;
    k.seed = *rc::gen::arbitrary<std::uint64_t>();
    c.schedule = *schedule();
    validate_knobs(k);
    return c;
  });
}

RC_GTEST_PROP(AmaxGroup, the_check_is_clean_iff_every_amax_group_is_exactly_a_set_of_ranks_sharing_their_tensors, ()) {
  const ProtocolCase c = *group_case();
  const bool correct = sorted(Layout(c.knobs).amax_groups()) == must_agree(c.knobs);
  RC_TAG(correct ? "correct group" : "wrong group");
  const ObservedRun run = observe(c, {}, Values::as_configured);
  const bool clean = run.run.outcome == sched::RunOutcome::finished && run.run.hazards.empty();
  if (clean != correct) {
    RC_LOG() << failure_report("amax_group", run, check_command(c));
    RC_FAIL(fmt::format("the amax groups are {} the ranks that share each tensor, but the run is {}:\n{}",
                        correct ? "exactly" : "not", clean ? "clean" : "not clean", run.describe_hazards()));
  }
  if (!correct) {
    // The report names a tensor: every hazard of a wrong group is about values; unless the group
    // spans pipeline stages, which reach their reductions at different points of the schedule
    // with different sizes: then a hang or a collective mismatch too.
    bool spans_stages = false;
    const Layout layout(c.knobs);
    for (const auto& group : layout.amax_groups()) {
      for (RankId r : group) spans_stages |= layout.stage(r) != layout.stage(group.front());
    }
    const bool pipelined = c.knobs.pp > 1 && c.knobs.pp_schedule != PpSchedule::independent;
    for (const Hazard& h : run.run.hazards) {
      const bool about_values = h.kind == HazardKind::value_mismatch || h.kind == HazardKind::replica_divergence;
      const bool schedule = h.kind == HazardKind::deadlock || h.kind == HazardKind::collective_mismatch ||
                            h.kind == HazardKind::unjoined_collective;
      RC_ASSERT(about_values || (spans_stages && pipelined && schedule));
      RC_ASSERT(!h.subject.empty() || h.kind == HazardKind::deadlock);
    }
  }
}

}  // namespace
}  // namespace amaxcheck::props
