// Generators for protocol configurations and schedules. Every generator shrinks towards the
// smallest layout and the fewest modules, microbatches, iterations, rules and inputs, so a
// counterexample comes out as a short command line.
#include "generators.h"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <set>

#include "protocols/knob_values.h"
#include "sequential_reference.h"
#include "util/check.h"

namespace amaxcheck::props {
namespace {

std::uint32_t world_of(const ProtocolKnobs& k) { return k.dp * k.tp * k.pp; }

/// DP 1-16, TP 1-4, PP 1-2, at most kMaxWorld ranks; `min_dp` for designs that need a
/// gradient group with an odd member.
void gen_layout(ProtocolKnobs& k, std::uint32_t max_world, std::uint32_t min_dp = 1, std::uint32_t max_tp = 4) {
  k.tp = *rc::gen::inRange<std::uint32_t>(1, std::min(max_tp, max_world / min_dp) + 1);
  k.pp = *rc::gen::inRange<std::uint32_t>(1, max_world / (min_dp * k.tp) >= 2 ? 3 : 2);
  const std::uint32_t max_dp = std::max(min_dp, max_world / (k.tp * k.pp));
  k.dp = *rc::gen::inRange<std::uint32_t>(min_dp, max_dp + 1);
}

/// The sizes every design shares: modules, microbatches, iterations, tensors, history, ...
void gen_sizes(ProtocolKnobs& k) {
  k.modules = *rc::gen::inRange<std::uint32_t>(1, 4);
  k.microbatches = *rc::gen::inRange<std::uint32_t>(1, 4);
  k.iters = *rc::gen::inRange<std::uint32_t>(1, 4);
  k.history = *rc::gen::inRange<std::uint32_t>(1, 5);
  k.algo = *rc::gen::element(HistoryAlgo::max, HistoryAlgo::most_recent);
  k.margin = *rc::gen::weightedOneOf<int>({{6, rc::gen::inRange(0, 4)}, {2, rc::gen::inRange(-3, 0)},
                                           {1, rc::gen::element(-64, 64)}});
  k.elems = *rc::gen::inRange<std::uint32_t>(1, 5);
  k.fwd_tensors = *rc::gen::inRange<std::uint32_t>(1, 3);
  k.bwd_tensors = *rc::gen::inRange<std::uint32_t>(1, 3);
  k.buckets = *rc::gen::inRange<std::uint32_t>(1, 4);
  k.grad_op = *rc::gen::element(GradOp::all_reduce, GradOp::reduce_scatter);
  k.grad_overlap = *rc::gen::arbitrary<bool>();
  k.recompute = *rc::gen::arbitrary<bool>();
  k.seed = *rc::gen::arbitrary<std::uint64_t>();
}

std::optional<std::uint32_t> gen_optional_iter(const ProtocolKnobs& k) {
  if (*rc::gen::arbitrary<bool>()) return std::nullopt;
  return *rc::gen::inRange<std::uint32_t>(0, k.iters);
}

/// Hand-set tensor values with the edge cases (zeros, subnormals, infinities, NaN).
void gen_inputs(ProtocolKnobs& k) {
  const auto count = *rc::gen::inRange(0, 5);
  const std::uint32_t world = world_of(k);
  for (int i = 0; i < count; ++i) {
    InputRule rule;
    rule.rank = *rc::gen::inRange<RankId>(0, world);
    rule.iter = *rc::gen::inRange<std::uint32_t>(0, k.iters);
    rule.module = *rc::gen::inRange<std::uint32_t>(0, k.modules);
    rule.dir = *rc::gen::element(Direction::forward, Direction::backward);
    const std::uint32_t tensors = rule.dir == Direction::forward ? k.fwd_tensors : k.bwd_tensors;
    if (*rc::gen::arbitrary<bool>()) rule.tensor = *rc::gen::inRange<std::uint32_t>(0, tensors);
    const std::size_t n = *rc::gen::arbitrary<bool>() ? 1 : k.elems;
    rule.values = *rc::gen::container<std::vector<float>>(n, special_float());
    k.inputs.push_back(std::move(rule));
  }
}

void gen_evals(ProtocolKnobs& k) {
  const auto count = *rc::gen::weightedElement<int>({{4, 0}, {1, 1}, {1, 2}});
  for (int i = 0; i < count; ++i) {
    k.evals.push_back(EvalRule{*rc::gen::inRange<std::uint32_t>(0, k.modules), gen_optional_iter(k)});
  }
}

/// Modules without a backward (--frozen), in every iteration or one.
void gen_frozen(ProtocolKnobs& k) {
  const auto count = *rc::gen::weightedElement<int>({{4, 0}, {1, 1}, {1, 2}});
  for (int i = 0; i < count; ++i) {
    k.frozen.push_back(EvalRule{*rc::gen::inRange<std::uint32_t>(0, k.modules), gen_optional_iter(k)});
  }
}

/// Modules called twice in one autocast (--repeat), delayed scaling with keyed slots (the
/// default: positional slots are the unsafe twin, tests/protocols/slots_test.cpp).
void gen_repeats(ProtocolKnobs& k) {
  const auto count = *rc::gen::weightedElement<int>({{4, 0}, {1, 1}, {1, 2}});
  for (int i = 0; i < count; ++i) {
    k.repeats.push_back(EvalRule{*rc::gen::inRange<std::uint32_t>(0, k.modules), gen_optional_iter(k)});
  }
}

/// Per-rank skips, widened to the skipper's whole amax group so the reductions still match.
void gen_group_skips(ProtocolKnobs& k) {
  const auto count = *rc::gen::weightedElement<int>({{3, 0}, {2, 1}, {1, 2}});
  std::set<std::tuple<RankId, std::uint32_t, std::optional<std::uint32_t>>> seen;
  for (int i = 0; i < count; ++i) {
    const RankId rank = *rc::gen::inRange<RankId>(0, world_of(k));
    const std::uint32_t module = *rc::gen::inRange<std::uint32_t>(0, k.modules);
    const auto iter = gen_optional_iter(k);
    for (RankId r : amax_group(k, rank)) {
      if (seen.insert({r, module, iter}).second) k.skips.push_back(SkipRule{r, module, iter});
    }
  }
}

/// A named group kind that is correct for the layout: each amax group is exactly the ranks
/// that share its tensors (replica_group), so a design shows only its own hazard. `auto` always
/// is; `dp` is when TP is 1, `world` when PP is 1 too, and so on (amax_group_test.cpp checks
/// every other group is a hazard).
GroupKind gen_group(const ProtocolKnobs& k) {
  std::vector<GroupKind> kinds;
  for (GroupKind kind : {GroupKind::automatic, GroupKind::dp, GroupKind::tp, GroupKind::tp_dp, GroupKind::world}) {
    ProtocolKnobs with = k;
    with.group = kind;
    bool exact = true;
    for (RankId r = 0; r < world_of(k); ++r) exact = exact && amax_group(with, r) == replica_group(k, r);
    if (exact) kinds.push_back(kind);
  }
  return *rc::gen::elementOf(kinds);
}

/// A correct group of at least two ranks around rank 0 (a design whose hazard needs a
/// reduction): delayed scaling's stage needs two ranks, current scaling's TP group two shards.
void ensure_reduction(ProtocolKnobs& k) {
  k.group = gen_group(k);
  if (amax_group(k, 0).size() >= 2) return;
  k.group = GroupKind::automatic;
  if (k.protocol == ProtocolName::current_scaling) {
    k.tp = 2;
    k.dp = std::max<std::uint32_t>(1, k.dp / 2);
  } else if (k.tp * k.dp < 2) {
    k.dp = 2;
  }
}

bool validates(const ProtocolKnobs& k) {
  try {
    validate_knobs(k);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

/// Shared only where the knobs allow it (each amax group is a gradient group).
CommChoice gen_comm(ProtocolKnobs& k) {
  if (*rc::gen::arbitrary<bool>()) return CommChoice::separate;
  ProtocolKnobs shared = k;
  shared.comm = CommChoice::shared;
  return validates(shared) ? CommChoice::shared : CommChoice::separate;
}

void check_valid(const ProtocolKnobs& k) {
  try {
    validate_knobs(k);
  } catch (const InputError& e) {
    RC_FAIL(std::string("the generator produced invalid knobs: ") + e.what() + "\n" + command_line(k));
  }
}

}  // namespace

const char* to_string(UnsafeDesign design) {
  switch (design) {
    case UnsafeDesign::wait_after_copy: return "te-async wait after copy-back";
    case UnsafeDesign::shared_comm_rank_dependent_order: return "shared comm with a rank-dependent amax order";
    case UnsafeDesign::serialized_rank_dependent_order: return "separate comm, rank-dependent order, serialized kernels";
    case UnsafeDesign::skip_on_part_of_a_group: return "a module skipped on part of an amax group";
    case UnsafeDesign::evaluation_module_first: return "te-async with an evaluation-mode module first";
  }
  return "?";
}

rc::Gen<float> special_float() {
  return rc::gen::weightedOneOf<float>({
      {4, rc::gen::map(rc::gen::inRange(-64, 65), [](int v) { return static_cast<float>(v) / 8.0f; })},
      {1, rc::gen::element(0.0f, -0.0f)},
      {1, rc::gen::element(std::numeric_limits<float>::denorm_min(), -1e-40f, 1e-39f, FLT_MIN / 2)},
      {1, rc::gen::element(std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity())},
      {1, rc::gen::just(std::numeric_limits<float>::quiet_NaN())},
      {1, rc::gen::element(FLT_MAX, -FLT_MAX, 448.0f, 57344.0f, 1e-30f, 1e30f)},
  });
}

rc::Gen<Schedule> schedule() {
  return rc::gen::exec([] {
    Schedule s;
    s.strategy = *rc::gen::element<std::string>("random", "pct");
    s.seed = *rc::gen::arbitrary<std::uint64_t>();
    s.depth = *rc::gen::inRange<std::uint32_t>(1, 5);
    return s;
  });
}

namespace {

/// A safe design.
ProtocolKnobs gen_safe(std::uint32_t max_world) {
  ProtocolKnobs k;
  k.protocol = *rc::gen::element(ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling);
  gen_layout(k, max_world);
  gen_sizes(k);
  k.group = gen_group(k);
  k.kernels = *rc::gen::element(KernelConcurrency::concurrent, KernelConcurrency::serialized);
  k.wait = WaitPoint::before_copy;
  k.amax_order = AmaxOrder::same;
  if (k.protocol == ProtocolName::te_async) {
    k.comm = CommChoice::separate;
  } else {
    k.comm = gen_comm(k);
  }
  // A rank-dependent order is harmless when nothing else shares the order: a separate
  // communicator with concurrent kernels (te-sync), or no delayed reduction at all.
  if ((k.protocol == ProtocolName::te_sync && k.comm == CommChoice::separate &&
       k.kernels == KernelConcurrency::concurrent) ||
      k.protocol == ProtocolName::current_scaling) {
    k.amax_order = *rc::gen::element(AmaxOrder::same, AmaxOrder::rank_dependent);
  }
  // Where delayed scaling's reductions go out. A forward reduction in the first module (--reduce-at
  // first-module) is launched in the next autocast's first *registering* module, so an
  // evaluation-mode module ahead of it copies back an unreduced buffer; a backward reduction tied to
  // the forward's first module (--reduce-at-bwd first-module, te-async's default) is never launched
  // when that module is frozen (reduce_point_test.cpp has both): no evaluation-mode modules with the
  // first, no frozen ones with the second.
  if (k.protocol != ProtocolName::current_scaling) {
    k.reduce_at = *rc::gen::element(ReducePoint::exit, ReducePoint::next_entry, ReducePoint::first_module);
    k.reduce_at_bwd = *rc::gen::element(BwdReducePoint::automatic, BwdReducePoint::first_module, BwdReducePoint::last_backward);
  }
  const bool first_module = k.reduce_at == ReducePoint::first_module;
  const bool backward_first_module = k.protocol != ProtocolName::current_scaling && reduce_at_bwd_of(k) == BwdReducePoint::first_module;
  if (k.protocol != ProtocolName::current_scaling) {
    k.registration = *rc::gen::element(Registration::dynamic, Registration::static_slots);
    if (k.registration == Registration::static_slots) k.unrun = *rc::gen::element(UnrunUpdate::update, UnrunUpdate::keep);
  }
  // te-async waits on the handle in the first *training* module only, so an evaluation-mode
  // module that runs before it still copies back unwaited: UnsafeDesign::evaluation_module_first.
  if (k.protocol != ProtocolName::te_async && !first_module) gen_evals(k);
  if (!backward_first_module) gen_frozen(k);
  if (k.protocol != ProtocolName::current_scaling) gen_repeats(k);
  gen_group_skips(k);
  gen_inputs(k);
  check_valid(k);
  return k;
}

}  // namespace

rc::Gen<ProtocolKnobs> safe_knobs(std::uint32_t max_world) {
  return rc::gen::exec([max_world] { return gen_safe(max_world); });
}

rc::Gen<ProtocolKnobs> unsafe_knobs(UnsafeDesign design, std::uint32_t max_world) {
  return rc::gen::exec([design, max_world] {
    ProtocolKnobs k;
    switch (design) {
      case UnsafeDesign::wait_after_copy:
        k.protocol = ProtocolName::te_async;
        k.wait = WaitPoint::after_copy;
        gen_layout(k, max_world);
        gen_sizes(k);
        ensure_reduction(k);  // a reduction needs two ranks in the group
        k.comm = gen_comm(k);
        // DDP's bucket wait orders a shared comm's only reduction before the next copy-back
        // (protocol_verdicts_test: one microbatch masks the race); two microbatches unmask it.
        if (k.comm == CommChoice::shared) k.microbatches = std::max<std::uint32_t>(k.microbatches, 2);
        k.kernels = *rc::gen::element(KernelConcurrency::concurrent, KernelConcurrency::serialized);
        break;
      case UnsafeDesign::shared_comm_rank_dependent_order:
        k.protocol = *rc::gen::element(ProtocolName::te_sync, ProtocolName::te_async);
        gen_layout(k, max_world, 2, 1);
        gen_sizes(k);
        k.group = *rc::gen::element(GroupKind::automatic, GroupKind::dp, GroupKind::tp_dp);
        k.comm = CommChoice::shared;
        k.amax_order = AmaxOrder::rank_dependent;
        k.kernels = *rc::gen::element(KernelConcurrency::concurrent, KernelConcurrency::serialized);
        break;
      case UnsafeDesign::serialized_rank_dependent_order:
        k.protocol = *rc::gen::element(ProtocolName::te_sync, ProtocolName::te_async);
        gen_layout(k, max_world, 2);
        gen_sizes(k);
        k.group = *rc::gen::element(GroupKind::automatic, GroupKind::dp, GroupKind::tp_dp);
        k.comm = CommChoice::separate;
        k.amax_order = AmaxOrder::rank_dependent;
        k.kernels = KernelConcurrency::serialized;
        break;
      case UnsafeDesign::skip_on_part_of_a_group: {
        k.protocol = *rc::gen::element(ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling);
        gen_layout(k, max_world, 2);
        gen_sizes(k);
        ensure_reduction(k);
        k.comm = gen_comm(k);
        // Skip one module on a strict, non-empty part of rank 0's group, in one iteration or all.
        const std::vector<RankId> group = amax_group(k, 0);
        const std::uint32_t module = *rc::gen::inRange<std::uint32_t>(0, k.modules);
        const auto iter = gen_optional_iter(k);
        const std::size_t skipped = *rc::gen::inRange<std::size_t>(1, group.size());
        const auto start = *rc::gen::inRange<std::size_t>(0, group.size());
        for (std::size_t i = 0; i < skipped; ++i) k.skips.push_back(SkipRule{group[(start + i) % group.size()], module, iter});
        break;
      }
      case UnsafeDesign::evaluation_module_first:
        // Module 0 trains in some iteration and runs in evaluation mode in the next: its
        // prepare step copies back that registration while nothing waited on the handle.
        k.protocol = ProtocolName::te_async;
        k.wait = WaitPoint::before_copy;
        gen_layout(k, max_world);
        gen_sizes(k);
        k.iters = std::max<std::uint32_t>(k.iters, 2);
        ensure_reduction(k);
        k.comm = CommChoice::separate;
        k.kernels = *rc::gen::element(KernelConcurrency::concurrent, KernelConcurrency::serialized);
        k.evals.push_back(EvalRule{0, *rc::gen::inRange<std::uint32_t>(1, k.iters)});
        break;
    }
    gen_inputs(k);
    check_valid(k);
    return k;
  });
}

rc::Gen<ProtocolCase> safe_case(std::uint32_t max_world) {
  return rc::gen::build<ProtocolCase>(rc::gen::set(&ProtocolCase::knobs, safe_knobs(max_world)),
                                      rc::gen::set(&ProtocolCase::schedule, schedule()));
}

rc::Gen<ProtocolCase> unsafe_case(UnsafeDesign design, std::uint32_t max_world) {
  return rc::gen::build<ProtocolCase>(rc::gen::set(&ProtocolCase::knobs, unsafe_knobs(design, max_world)),
                                      rc::gen::set(&ProtocolCase::schedule, schedule()));
}

rc::Gen<UnsafeDesign> unsafe_design() {
  return rc::gen::element(UnsafeDesign::wait_after_copy, UnsafeDesign::shared_comm_rank_dependent_order,
                          UnsafeDesign::serialized_rank_dependent_order, UnsafeDesign::skip_on_part_of_a_group,
                          UnsafeDesign::evaluation_module_first);
}

bool is_signature(UnsafeDesign design, HazardKind kind) {
  switch (design) {
    case UnsafeDesign::wait_after_copy:
    case UnsafeDesign::evaluation_module_first: return kind == HazardKind::data_race;
    case UnsafeDesign::shared_comm_rank_dependent_order: return kind == HazardKind::collective_mismatch;
    case UnsafeDesign::serialized_rank_dependent_order: return kind == HazardKind::deadlock;
    case UnsafeDesign::skip_on_part_of_a_group:
      return kind == HazardKind::collective_mismatch || kind == HazardKind::unjoined_collective;
  }
  return false;
}

std::string schedule_args(const Schedule& s) {
  std::string text = fmt::format("--strategy {} --seed {}", s.strategy, s.seed);
  if (s.strategy == "pct") text += fmt::format(" --depth {}", s.depth);
  return text + " --runs 1";
}

std::string check_command(const ProtocolCase& c) {
  return command_line(c.knobs) + " " + schedule_args(c.schedule);
}

void showValue(const ProtocolCase& c, std::ostream& os) { os << check_command(c); }
void showValue(const Schedule& s, std::ostream& os) { os << schedule_args(s); }
void showValue(UnsafeDesign design, std::ostream& os) { os << to_string(design); }

}  // namespace amaxcheck::props
