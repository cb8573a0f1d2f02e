// Property 3: hazard verdicts are exact in both directions. Safe designs report nothing under
// any generated configuration and schedule; each unsafe design is reported with its kind and
// the participants that cause it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "protocols/protocol.h"
#include "scheduler/explore.h"

#include "property_checks.h"

namespace amaxcheck::props {
namespace {

RC_GTEST_PROP(HazardVerdicts, safe_designs_report_no_hazard_under_any_configuration_and_schedule, ()) {
  const ProtocolCase c = *safe_case();
  RC_TAG(to_string(c.knobs.protocol));
  check_safe_design_is_clean(c);
}

RC_GTEST_PROP(HazardVerdicts, small_safe_configurations_are_clean_in_every_schedule_the_exhaustive_search_explores, ()) {
  ProtocolKnobs k = *safe_knobs(2);
  // One iteration of one microbatch keeps the state space small enough to cover.
  k.iters = 1;
  k.microbatches = 1;
  k.modules = std::min<std::uint32_t>(k.modules, 2);
  k.skips.clear();
  k.evals.clear();
  k.inputs.clear();
  for (auto* rules : {&k.frozen, &k.repeats}) {  // frozen and repeated modules stay, moved into the smaller shape
    for (EvalRule& rule : *rules) {
      rule.module %= k.modules;
      if (rule.iter) rule.iter = 0;
    }
  }
  RC_TAG(to_string(k.protocol));
  check_safe_design_is_clean_exhaustively(k, 50);
}

RC_GTEST_PROP(HazardVerdicts, waiting_after_the_copy_back_is_reported_as_a_race_between_copy_back_and_reduction, ()) {
  check_unsafe_design_is_reported(UnsafeDesign::wait_after_copy, *unsafe_case(UnsafeDesign::wait_after_copy));
}

RC_GTEST_PROP(HazardVerdicts, a_shared_comm_with_a_rank_dependent_order_is_reported_as_a_mismatch_between_opposite_ranks,
              ()) {
  const UnsafeDesign d = UnsafeDesign::shared_comm_rank_dependent_order;
  check_unsafe_design_is_reported(d, *unsafe_case(d));
}

RC_GTEST_PROP(HazardVerdicts, a_rank_dependent_order_under_serialized_kernels_is_reported_as_a_deadlock_cycle, ()) {
  const UnsafeDesign d = UnsafeDesign::serialized_rank_dependent_order;
  check_unsafe_design_is_reported(d, *unsafe_case(d));
}

RC_GTEST_PROP(HazardVerdicts, a_module_skipped_on_part_of_its_amax_group_is_reported_naming_a_skipping_rank, ()) {
  const UnsafeDesign d = UnsafeDesign::skip_on_part_of_a_group;
  check_unsafe_design_is_reported(d, *unsafe_case(d));
}

RC_GTEST_PROP(HazardVerdicts, an_evaluation_mode_module_ahead_of_training_is_reported_as_a_race_with_the_reduction, ()) {
  const UnsafeDesign d = UnsafeDesign::evaluation_module_first;
  check_unsafe_design_is_reported(d, *unsafe_case(d));
}

// TransformerEngine waits on the async handle only in the first *training* module of an
// autocast (`if self.fp8 and self.training`), but a module in evaluation mode still copies back
// the previous registration in its prepare step. So an evaluation-mode module ahead of the
// first training module races with the amax all-reduce even when the wait comes before the
// copy-back: a hazard of the design, which the protocol library models faithfully.
TEST(HazardVerdicts, an_evaluation_mode_module_copies_back_without_the_wait_and_races_with_the_reduction) {
  ProtocolKnobs knobs;
  knobs.protocol = ProtocolName::te_async;
  knobs.wait = WaitPoint::before_copy;
  knobs.modules = 1;
  knobs.evals.push_back(EvalRule{0, 1});
  sched::ExploreOptions options;
  options.runs = 20;
  const sched::ExploreResult result = sched::explore(build_protocol(knobs), options);
  bool race_on_copy_back = false;
  for (const auto& found : result.hazards) {
    if (found.hazard.kind != HazardKind::data_race) continue;
    for (const auto& p : found.hazard.participants) race_on_copy_back |= p.op_name.rfind("copy_back", 0) == 0;
  }
  EXPECT_TRUE(race_on_copy_back) << "amaxcheck check te-async --modules 1 --eval 0:1";
}

}  // namespace
}  // namespace amaxcheck::props
