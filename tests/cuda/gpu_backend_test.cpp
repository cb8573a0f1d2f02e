// The backend on real GPUs. Without a usable device every test here skips with the driver's
// reason, except the one that checks that reason is reported.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "cuda/communicators.h"
#include "cuda/compat.h"
#include "cuda/differential.h"
#include "cuda/gpu_run.h"
#include "cuda/placement.h"
#include "cuda/session.h"
#include "gpu_scenarios.h"
#include "util/check.h"

namespace amaxcheck::gpu {
namespace {

int usable_devices() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = cuda_unavailable_reason()) GTEST_SKIP() << *reason;
  }
  /// The scenario as written when it fits, else its 1-rank-communicator variant (what
  /// `check --backend gpu` runs).
  static Scenario fitted(const Scenario& s) {
    const FittedScenario fit = fit_to_this_machine(s);
    EXPECT_EQ(fit.one_rank_comms, !plan_placement(s, here()).fits()) << fit.note;
    return fit.scenario;
  }
  static PlacementInput here() {
    PlacementInput in;
    in.device_count = usable_devices();
    in.nccl_version = compat::runtime_nccl_version();
    in.multi_rank_env = compat::multi_rank_gpu_enabled(in.nccl_version);
    return in;
  }
  /// Empty when `s` runs as written here; otherwise why not (the placement's note).
  static std::string does_not_fit_here(const Scenario& s) {
    const Placement p = plan_placement(s, here());
    return p.fits() ? std::string() : p.note;
  }
  static GpuRunOptions quick() {
    GpuRunOptions options;
    options.op_timeout_ms = 5000;
    options.run_timeout_ms = 60000;
    return options;
  }
};

TEST(GpuAvailability, without_a_device_the_reason_is_the_drivers_and_a_run_is_an_input_error) {
  const auto reason = cuda_unavailable_reason();
  if (!reason) GTEST_SKIP() << "a CUDA device is usable here";
  EXPECT_EQ(reason->rfind("no usable CUDA device: ", 0), 0u) << *reason;
  const Scenario s = testing::every_kernel_on_one_rank(8);
  try {
    run_on_gpus(s, {});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), *reason);
  }
}

TEST_F(Gpu, every_kernel_matches_the_simulator_bit_for_bit) {
  for (std::uint32_t size : {1u, 257u, 300000u}) {
    const Scenario s = testing::every_kernel_on_one_rank(size);
    Engine engine(s);
    const std::vector<Step> schedule = run_first_enabled(engine);
    const GpuRunResult gpu = run_on_gpus(s, schedule, quick());
    EXPECT_EQ(gpu.data_check_wrong, 0u);
    ASSERT_FALSE(gpu.hang) << gpu.hang_reason;
    EXPECT_FALSE(gpu.gate_timed_out);
    const auto mismatch = first_mismatch(engine, gpu);
    EXPECT_FALSE(mismatch.has_value()) << "size " << size << ": " << mismatch->describe();
  }
}

TEST_F(Gpu, every_way_of_making_the_amax_communicator_gives_the_same_values) {
  const Scenario s = testing::every_kernel_on_one_rank(64);
  Engine engine(s);
  const std::vector<Step> schedule = run_first_enabled(engine);
  for (CommCreation how : enum_values<CommCreation>()) {
    GpuRunOptions options = quick();
    options.derived_comms = how;
    const GpuRunResult gpu = run_on_gpus(s, schedule, options);
    ASSERT_FALSE(gpu.hang) << to_string(how) << ": " << gpu.hang_reason;
    EXPECT_FALSE(first_mismatch(engine, gpu).has_value()) << to_string(how);
  }
}

TEST_F(Gpu, wait_after_copy_schedules_reproduce_the_simulators_values) {
  for (bool wait_first : {false, true}) {
    const Scenario s = fitted(testing::async_copy_back(wait_first));
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      Engine engine(s);
      const std::vector<Step> schedule = testing::schedule_for(s, seed, engine);
      const GpuRunResult gpu = run_on_gpus(s, schedule, quick());
      ASSERT_FALSE(gpu.hang) << gpu.hang_reason;
      const auto mismatch = first_mismatch(engine, gpu);
      EXPECT_FALSE(mismatch.has_value()) << "seed " << seed << ": " << mismatch->describe();
    }
  }
}

TEST_F(Gpu, a_truncated_schedule_leaves_gated_work_that_drains_when_released) {
  const Scenario s = testing::every_kernel_on_one_rank(16);
  Engine engine(s);
  // Issue everything, execute nothing: the gates hold every kernel until the leftover probe.
  const std::vector<Step> schedule = testing::issue_only(engine);
  const GpuRunResult gpu = run_on_gpus(s, schedule, quick());
  EXPECT_TRUE(gpu.simulator_was_stuck);
  EXPECT_FALSE(gpu.hang) << gpu.hang_reason;
}

// The GPU tests' own programs, on the simulator alone (these run on any machine): the
// multi-member reduction finishes with every replica equal, and the rank-dependent order is a
// rendezvous the simulator refuses to complete, naming the mismatch.
TEST(GpuScenarios, the_multi_member_reduction_finishes_on_the_simulator) {
  for (std::uint32_t ranks : {2u, 4u, 8u}) {
    const Scenario s = testing::dp_sum_and_amax_max(ranks);
    Engine engine(s);
    run_first_enabled(engine);
    EXPECT_TRUE(engine.done()) << ranks << " ranks";
    EXPECT_EQ(s.comms.size(), 2u);
    EXPECT_EQ(split_parent(s, 1), 0) << "the amax communicator is derived from the DP one";
  }
}

TEST(GpuScenarios, the_rank_dependent_order_is_a_mismatch_the_simulator_refuses_to_complete) {
  const Scenario s = testing::shared_comm_rank_dependent_order();
  Engine engine(s);
  run_first_enabled(engine);
  ASSERT_FALSE(engine.done());
  std::string blocked;
  for (const Stuck& stuck : engine.stuck()) {
    for (const std::string& b : stuck.blocked) blocked += b + "\n";
  }
  EXPECT_NE(blocked.find("mismatched"), std::string::npos) << blocked;
}

// Real cross-rank reductions: 2, 4 and 8 members of one communicator, on as many GPUs or on one
// (NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1), with every way of making the amax
// communicator. Sizes that do not fit this machine are named and left out; none fitting skips.
TEST_F(Gpu, members_of_one_communicator_reduce_across_ranks_like_the_simulator) {
  std::string left_out;
  int ran = 0;
  for (std::uint32_t ranks : {2u, 4u, 8u}) {
    const Scenario s = testing::dp_sum_and_amax_max(ranks);
    if (const std::string why = does_not_fit_here(s); !why.empty()) {
      left_out += fmt::format(" {} members: {};", ranks, why);
      continue;
    }
    Engine engine(s);
    const std::vector<Step> schedule = run_first_enabled(engine);
    for (CommCreation how : enum_values<CommCreation>()) {
      GpuRunOptions options = quick();
      options.derived_comms = how;
      const GpuRunResult gpu = run_on_gpus(s, schedule, options);
      ASSERT_FALSE(gpu.hang) << ranks << " members, " << to_string(how) << ": " << gpu.hang_reason;
      EXPECT_EQ(gpu.data_check_wrong, 0u) << ranks << " members, " << to_string(how);
      const auto mismatch = first_mismatch(engine, gpu);
      EXPECT_FALSE(mismatch.has_value()) << ranks << " members, " << to_string(how) << ": " << mismatch->describe();
      if (how == CommCreation::split_shared) std::printf("note: %u members: %s\n", ranks, gpu.placement.c_str());
    }
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no multi-member communicator fits here:" << left_out;
  if (!left_out.empty()) std::printf("note: left out:%s\n", left_out.c_str());
}

// Seed hazard 2 on hardware: the simulator refuses to complete the mismatched collective and
// reports the run stuck; the GPUs then run the mismatched NCCL calls for real. Whether NCCL
// hangs or finishes with wrong data is NCCL's business; either way the watchdog must keep the
// process alive (abort, gates opened, device drained) and the next run must be correct.
TEST_F(Gpu, a_collective_mismatch_on_a_shared_communicator_is_escaped_and_the_next_run_is_correct) {
  const Scenario s = testing::shared_comm_rank_dependent_order();
  if (const std::string why = does_not_fit_here(s); !why.empty()) GTEST_SKIP() << why;
  Engine engine(s);
  const std::vector<Step> schedule = run_first_enabled(engine);
  ASSERT_FALSE(engine.done());
  bool mismatch_named = false;
  for (const Stuck& stuck : engine.stuck()) {
    for (const std::string& b : stuck.blocked) mismatch_named = mismatch_named || b.find("mismatched") != std::string::npos;
  }
  EXPECT_TRUE(mismatch_named) << "the simulator should refuse the mismatched rendezvous";
  GpuRunOptions options = quick();
  options.op_timeout_ms = 2000;
  const GpuRunResult gpu = run_on_gpus(s, schedule, options);
  EXPECT_TRUE(gpu.simulator_was_stuck);
  if (gpu.hang) {
    EXPECT_FALSE(gpu.stuck.empty()) << gpu.hang_reason;
    std::printf("note: the mismatched collectives hung on the GPU; the watchdog aborted them: %s\n",
                gpu.hang_reason.c_str());
  } else {
    std::printf("note: the mismatched collectives finished on the GPU (NCCL did not hang)\n");
  }
  EXPECT_FALSE(gpu.gate_timed_out);
  for (const std::string& note : gpu.notes) EXPECT_EQ(note.find("did not drain"), std::string::npos) << note;
  const Scenario good = testing::dp_sum_and_amax_max(2);
  Engine clean(good);
  const GpuRunResult after = run_on_gpus(good, run_first_enabled(clean), quick());
  ASSERT_FALSE(after.hang) << after.hang_reason;
  EXPECT_EQ(after.data_check_wrong, 0u);
  EXPECT_FALSE(first_mismatch(clean, after).has_value());
}

TEST_F(Gpu, a_member_that_never_joins_is_reported_as_a_hang_and_the_process_survives) {
  ScenarioBuilder b("unjoined");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c = b.comm("dp", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId st = b.stream(r, "nccl");
    const BufferId buf = b.buffer(r, "grad", 4);
    if (r == r0) b.op(r, t, ScenarioBuilder::all_reduce(st, c, {buf, 0, 4}, {buf, 0, 4}, "lonely"));
  }
  const Scenario s = b.build();
  // Two members: two GPUs, or one with NCCL >= 2.30 and NCCL_MULTI_RANK_GPU_ENABLE=1.
  if (const std::string why = does_not_fit_here(s); !why.empty()) GTEST_SKIP() << why;
  Engine engine(s);
  const std::vector<Step> schedule = run_first_enabled(engine);
  GpuRunOptions options = quick();
  options.op_timeout_ms = 2000;
  const auto start = std::chrono::steady_clock::now();
  const GpuRunResult gpu = run_on_gpus(s, schedule, options);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(gpu.simulator_was_stuck);
  ASSERT_TRUE(gpu.hang);
  ASSERT_EQ(gpu.stuck.size(), 1u);
  EXPECT_EQ(gpu.stuck[0].op_name, "lonely");
  EXPECT_EQ(gpu.stuck[0].rank, 0u);
  EXPECT_EQ(hang_hazard(gpu).participants.size(), 1u);
  // Escaped within the deadline: the op timeout, the abort and the drain, not the run timeout.
  EXPECT_LT(took, std::chrono::milliseconds(options.run_timeout_ms / 2));
  for (const std::string& note : gpu.notes) EXPECT_EQ(note.find("did not drain"), std::string::npos) << note;
}

// The watchdog on a single GPU, where no communicator can hang: a kernel on stream B waits
// (cudaStreamWaitEvent) for an event recorded behind a gate that the schedule never opens. The
// simulator would never pick that schedule, so the test writes it by hand; the replay must
// report a hang naming the blocked kernel, open every gate, drain, and leave the GPU usable.
TEST_F(Gpu, a_kernel_behind_a_never_released_gate_is_a_hang_and_the_gpu_stays_usable) {
  ScenarioBuilder b("held gate");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId a = b.stream(r, "a"), s_b = b.stream(r, "b");
  const EventId e = b.event(r, "e");
  const BufferId buf = b.buffer(r, "buf", 2);
  b.op(r, t, ScenarioBuilder::fill(a, {buf, 0, 1}, {1.0f}, "held"));
  b.op(r, t, ScenarioBuilder::record(a, e));
  b.op(r, t, ScenarioBuilder::wait(s_b, e));
  b.op(r, t, ScenarioBuilder::fill(s_b, {buf, 1, 1}, {2.0f}, "behind the event"));
  const Scenario s = b.build();
  std::vector<Step> schedule;
  auto add = [&](ActionKind kind, std::uint32_t lane, std::uint32_t op) {
    Step step;
    step.index = schedule.size();
    step.action = Action{kind, r, lane};
    step.op = OpRef{r, t, op};
    schedule.push_back(step);
  };
  for (std::uint32_t i = 0; i < 4; ++i) add(ActionKind::issue, t, i);
  for (std::uint32_t i : {2u, 3u}) add(ActionKind::execute, s_b, i);
  GpuRunOptions options = quick();
  options.op_timeout_ms = 1500;
  const GpuRunResult gpu = run_on_gpus(s, schedule, options);
  ASSERT_TRUE(gpu.hang);
  EXPECT_NE(gpu.hang_reason.find("behind the event"), std::string::npos) << gpu.hang_reason;
  bool blocked_reported = false;
  for (const StuckGpuOp& stuck : gpu.stuck) {
    blocked_reported = blocked_reported || (stuck.op_name == "behind the event" && stuck.state == "released, not finished");
  }
  EXPECT_TRUE(blocked_reported);
  EXPECT_FALSE(gpu.gate_timed_out);
  for (const std::string& note : gpu.notes) EXPECT_EQ(note.find("did not drain"), std::string::npos) << note;
  // The device drained: a normal run afterwards still matches the simulator.
  const Scenario good = testing::every_kernel_on_one_rank(8);
  Engine engine(good);
  const GpuRunResult after = run_on_gpus(good, run_first_enabled(engine), quick());
  ASSERT_FALSE(after.hang) << after.hang_reason;
  EXPECT_FALSE(first_mismatch(engine, after).has_value());
}

TEST_F(Gpu, a_schedule_that_queues_too_many_ops_is_refused_before_it_can_block_the_host) {
  const Scenario s = testing::every_kernel_on_one_rank(4);
  Engine engine(s);
  const std::vector<Step> schedule = testing::issue_only(engine);
  GpuRunOptions options = quick();
  options.max_queued_ops_per_gpu = 3;
  try {
    run_on_gpus(s, schedule, options);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 3 ops ahead of their execution on GPU 0"), std::string::npos)
        << e.what();
  }
}

TEST_F(Gpu, a_schedule_from_another_scenario_is_reported_as_diverged) {
  const Scenario s = testing::every_kernel_on_one_rank(4);
  const Scenario other = testing::every_kernel_on_one_rank(8);
  Engine engine(other);
  std::vector<Step> schedule = run_first_enabled(engine);
  schedule[1].op.index = 5;
  EXPECT_THROW(run_on_gpus(s, schedule, quick()), InputError);
}

}  // namespace
}  // namespace amaxcheck::gpu
