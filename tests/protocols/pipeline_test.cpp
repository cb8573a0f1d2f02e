// Pipeline schedules (pp > 1): the stage order of 1F1B and GPipe, the send/recv between stages,
// per-stage module counts, and an amax group spanning stages, which hangs or mismatches under a
// real schedule (the stages reach their reductions at different points with different sizes)
// where a per-stage group is clean.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocols/schedule.h"
#include "util/check.h"
#include "run_protocol.h"

namespace amaxcheck {
namespace {

using testing::knobs_of;
using testing::run_protocol;

/// "F0 F1 B0 B1": a stage's schedule, written as Megatron's papers draw it.
std::string order_text(const ProtocolKnobs& knobs, std::uint32_t stage) {
  std::string text;
  for (const PipeStep& step : pipeline_order(knobs, stage)) {
    text += (text.empty() ? "" : " ") + std::string(step.forward ? "F" : "B") + std::to_string(step.microbatch);
  }
  return text;
}

TEST(PipelineOrder, one_f_one_b_warms_up_with_one_forward_per_later_stage_then_alternates_and_cools_down) {
  const auto knobs = knobs_of(ProtocolName::te_sync, {{"pp", "4"}, {"microbatches", "4"}});
  EXPECT_EQ(order_text(knobs, 0), "F0 F1 F2 F3 B0 B1 B2 B3");
  EXPECT_EQ(order_text(knobs, 1), "F0 F1 F2 B0 F3 B1 B2 B3");
  EXPECT_EQ(order_text(knobs, 2), "F0 F1 B0 F2 B1 F3 B2 B3");
  EXPECT_EQ(order_text(knobs, 3), "F0 B0 F1 B1 F2 B2 F3 B3");
}

TEST(PipelineOrder, one_f_one_b_with_fewer_microbatches_than_stages_warms_up_with_all_of_them) {
  const auto knobs = knobs_of(ProtocolName::te_sync, {{"pp", "4"}, {"microbatches", "2"}});
  EXPECT_EQ(order_text(knobs, 0), "F0 F1 B0 B1");
  EXPECT_EQ(order_text(knobs, 3), "F0 B0 F1 B1");
}

TEST(PipelineOrder, gpipe_runs_every_forward_then_every_backward_on_every_stage) {
  const auto knobs = knobs_of(ProtocolName::te_sync, {{"pp", "2"}, {"microbatches", "3"}, {"pp-schedule", "gpipe"}});
  EXPECT_EQ(order_text(knobs, 0), "F0 F1 F2 B0 B1 B2");
  EXPECT_EQ(order_text(knobs, 1), "F0 F1 F2 B0 B1 B2");
}

TEST(PipelineOrder, one_f_one_b_is_the_default_schedule) {
  EXPECT_EQ(ProtocolKnobs{}.pp_schedule, PpSchedule::one_f_one_b);
}

/// Ops of `kind` on rank `r`'s main thread, by name.
std::vector<std::string> p2p_names(const Scenario& s, RankId r) {
  std::vector<std::string> names;
  for (const Op& op : s.ranks[r].threads[0].program) {
    if (is_p2p(op.kind)) names.push_back(op.name + (op.group ? "*" : ""));
  }
  return names;
}

TEST(Pipeline, stages_send_activations_forward_and_gradients_backward_grouped_in_1f1b_steady_state) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "1"}, {"pp", "2"}, {"iters", "1"}}));
  ASSERT_TRUE(run.done) << run.describe();
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
  // Stage 0 warms up with F0, then F1 whose send goes out with the recv of B0's gradient.
  EXPECT_EQ(p2p_names(run.scenario, 0),
            (std::vector<std::string>{"send_activation", "send_activation*", "recv_grad*", "recv_grad"}));
  EXPECT_EQ(p2p_names(run.scenario, 1),
            (std::vector<std::string>{"recv_activation", "send_grad*", "recv_activation*", "send_grad"}));
}

TEST(Pipeline, gpipe_sends_and_receives_one_at_a_time) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "1"}, {"pp", "2"}, {"iters", "1"}, {"pp-schedule", "gpipe"}}));
  ASSERT_TRUE(run.done) << run.describe();
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
  EXPECT_EQ(p2p_names(run.scenario, 0), (std::vector<std::string>{"send_activation", "send_activation", "recv_grad", "recv_grad"}));
}

TEST(Pipeline, independent_stages_do_not_communicate) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "1"}, {"pp", "2"}, {"pp-schedule", "independent"}}));
  EXPECT_TRUE(p2p_names(run.scenario, 0).empty());
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
}

TEST(Pipeline, a_per_stage_group_is_clean_under_every_schedule_and_module_split) {
  for (const char* schedule : {"1f1b", "gpipe"}) {
    for (const char* split : {"same", "1,3"}) {
      for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling}) {
        const auto run = run_protocol(knobs_of(protocol, {{"pp", "2"}, {"tp", "2"}, {"pp-schedule", schedule}, {"stage-modules", split}}));
        EXPECT_TRUE(run.done) << schedule << " " << split << "\n" << run.describe();
        EXPECT_TRUE(run.hazards.empty()) << schedule << " " << split << "\n" << run.describe();
      }
    }
  }
}

TEST(Pipeline, stage_modules_gives_each_stage_its_own_module_count) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "1"}, {"pp", "2"}, {"stage-modules", "1,3"}}));
  const auto has_buffer = [&](RankId r, const std::string& name) {
    for (const Buffer& b : run.scenario.ranks[r].buffers) {
      if (b.name == name) return true;
    }
    return false;
  };
  EXPECT_FALSE(has_buffer(0, "m1.fwd.amax_history"));
  EXPECT_TRUE(has_buffer(1, "m2.fwd.amax_history"));
  std::size_t stage1_checks = 0;
  for (const ReplicaCheck& c : run.scenario.checks) stage1_checks += c.tensor.starts_with("stage 1 /") ? 1 : 0;
  EXPECT_EQ(stage1_checks, 3u * 2u * 3u);  // 3 modules x 2 directions x (history, scale, scale_inv)
}

TEST(Pipeline, a_world_group_across_stages_hangs_under_1f1b) {
  // te-sync waits on each forward reduction before sending the activation on: stage 0 waits in
  // its reduction for stage 1, which waits for that activation.
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"pp", "2"}, {"group", "world"}}));
  EXPECT_FALSE(run.done);
  EXPECT_TRUE(run.has(HazardKind::deadlock)) << run.describe();
  EXPECT_TRUE(run.has(HazardKind::collective_mismatch)) << run.describe();
}

TEST(Pipeline, a_world_group_across_stages_with_different_module_counts_is_a_size_mismatch_under_gpipe) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_async, {{"pp", "2"}, {"group", "world"}, {"pp-schedule", "gpipe"}, {"stage-modules", "1,2"}}));
  EXPECT_TRUE(run.has(HazardKind::collective_mismatch)) << run.describe();
  bool size = false;
  for (const Hazard& h : run.hazards) size |= h.kind == HazardKind::collective_mismatch && h.summary.starts_with("size mismatch");
  EXPECT_TRUE(size) << run.describe();
}

TEST(Pipeline, stage_modules_must_give_one_count_per_stage) {
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"pp", "2"}, {"stage-modules", "1,2,3"}})), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"pp", "2"}, {"dp", "1"}, {"stage-modules", "1,2"}, {"skip", "0:1"}})),
               InputError);
}

}  // namespace
}  // namespace amaxcheck
