// The backend on real GPUs. Without a usable device every test here skips with the driver's
// reason, except the one that checks that reason is reported.
#include <gtest/gtest.h>

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
  /// The scenario as written when it fits, else its 1-rank-communicator variant.
  static Scenario fitted(const Scenario& s) {
    PlacementInput in;
    in.device_count = usable_devices();
    in.nccl_version = 23000 - 1;  // never rely on the experimental multi-rank mode in tests
    return plan_placement(s, in).fits() ? s : split_communicators_per_rank(s);
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
  for (CommCreation how : {CommCreation::split_shared, CommCreation::split_unshared, CommCreation::fresh_init}) {
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
  std::vector<Step> schedule;
  // Issue everything, execute nothing: the gates hold every kernel until the leftover probe.
  while (!engine.enabled().empty() && engine.enabled().front().kind == ActionKind::issue) {
    schedule.push_back(engine.apply(engine.enabled().front()));
  }
  const GpuRunResult gpu = run_on_gpus(s, schedule, quick());
  EXPECT_TRUE(gpu.simulator_was_stuck);
  EXPECT_FALSE(gpu.hang) << gpu.hang_reason;
}

TEST_F(Gpu, a_member_that_never_joins_is_reported_as_a_hang_and_the_process_survives) {
  if (usable_devices() < 2) GTEST_SKIP() << "needs two GPUs (NCCL < 2.30 cannot put two members on one)";
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
  Engine engine(s);
  const std::vector<Step> schedule = run_first_enabled(engine);
  GpuRunOptions options = quick();
  options.op_timeout_ms = 2000;
  const GpuRunResult gpu = run_on_gpus(s, schedule, options);
  EXPECT_TRUE(gpu.simulator_was_stuck);
  ASSERT_TRUE(gpu.hang);
  ASSERT_EQ(gpu.stuck.size(), 1u);
  EXPECT_EQ(gpu.stuck[0].op_name, "lonely");
  EXPECT_EQ(hang_hazard(gpu).participants.size(), 1u);
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
