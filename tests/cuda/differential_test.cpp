// The oracle comparison, fed with hand-made GPU results: no GPU needed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cuda/differential.h"
#include "model/builder.h"

namespace amaxcheck::gpu {
namespace {

/// One rank fills a 4-element history; the check covers it.
Scenario one_fill() {
  ScenarioBuilder b("one fill");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId s = b.stream(r, "compute");
  const BufferId h = b.buffer(r, "amax_history", 4, {1, 2, 3, 4});
  b.op(r, t, ScenarioBuilder::fill(s, {h, 0, 4}, {5, 6, 7, 8}));
  Scenario out = b.build();
  out.checks.push_back(ReplicaCheck{"history", {{r, {h, 0, 4}}}, {}});
  return out;
}

GpuRunResult gpu_with(std::vector<float> values) {
  GpuRunResult result;
  result.checks.push_back(CheckValues{"history", {ReplicaValues{0, {0, 0, 4}, std::move(values)}}});
  return result;
}

TEST(Differential, identical_values_are_no_mismatch) {
  const Scenario s = one_fill();
  Engine engine(s);
  run_first_enabled(engine);
  EXPECT_FALSE(first_mismatch(engine, gpu_with({5, 6, 7, 8})).has_value());
}

TEST(Differential, the_first_differing_element_is_named_with_its_buffer_and_bits) {
  const Scenario s = one_fill();
  Engine engine(s);
  run_first_enabled(engine);
  const auto mismatch = first_mismatch(engine, gpu_with({5, 6, 3, 4}));
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->element, 2u);
  EXPECT_EQ(mismatch->simulated, 7.0f);
  EXPECT_EQ(mismatch->gpu, 3.0f);
  EXPECT_EQ(mismatch->describe(),
            "oracle mismatch: history on rank 0 buffer amax_history[2]: simulator 7 (0x40e00000), gpu 3 (0x40400000)");
}

TEST(Differential, a_negative_zero_differs_from_zero_but_nans_are_alike) {
  EXPECT_FALSE(same_value(0.0f, -0.0f));
  EXPECT_TRUE(same_value(std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()));
  EXPECT_FALSE(same_value(std::numeric_limits<float>::quiet_NaN(), 1.0f));
}

// judge_against_simulator: agreement only where values were compared and equal.

OracleVerdict judge(const GpuRunResult& gpu, bool simulated_stuck = false, bool checks = true) {
  Scenario s = one_fill();
  if (!checks) s.checks.clear();
  Engine engine(s);
  run_first_enabled(engine);
  return judge_against_simulator(engine, simulated_stuck, gpu);
}

TEST(Oracle, equal_values_agree_and_say_how_many_were_compared) {
  const OracleVerdict v = judge(gpu_with({5, 6, 7, 8}));
  EXPECT_TRUE(v.agree);
  EXPECT_FALSE(v.cut_short);
  EXPECT_EQ(v.line, "simulator and GPUs agree bit for bit on 4 value(s) of 1 check(s)");
}

TEST(Oracle, a_hang_is_never_called_agreement_of_values) {
  GpuRunResult hung;  // a hung run reads nothing back
  hung.hang = true;
  const OracleVerdict finished = judge(hung, false);
  EXPECT_FALSE(finished.agree);
  EXPECT_EQ(finished.line, "not compared: the GPUs hung where the simulated run finished");
  const OracleVerdict both = judge(hung, true);
  EXPECT_TRUE(both.agree);  // the same schedule hangs on both backends
  EXPECT_EQ(both.line.find("simulator and GPUs agree"), std::string::npos) << both.line;
}

TEST(Oracle, gpus_that_finish_a_run_the_simulator_deadlocks_in_never_agree) {
  // The simulator says this schedule hangs; GPUs that ran it to the end (with the very values a
  // finished run would hold) contradict it, whatever their values.
  const OracleVerdict v = judge(gpu_with({5, 6, 7, 8}), true);
  EXPECT_FALSE(v.agree);
  EXPECT_FALSE(v.mismatch.has_value());
  EXPECT_EQ(v.line, "not compared: the simulated run deadlocked, but the GPUs finished every op it left");
}

TEST(Oracle, a_failed_data_check_is_a_disagreement_even_when_the_values_are_equal) {
  GpuRunResult gpu = gpu_with({5, 6, 7, 8});
  gpu.data_check_wrong = 3;
  const OracleVerdict v = judge(gpu);
  EXPECT_FALSE(v.agree);
  EXPECT_EQ(v.line, "the checked values are equal, but the data check found 3 wrong element(s)");
}

TEST(Oracle, a_scenario_without_checks_compares_nothing_and_says_so) {
  const OracleVerdict v = judge(GpuRunResult{}, false, false);
  EXPECT_TRUE(v.agree);  // nothing to object to: the verdict is the simulator's
  EXPECT_EQ(v.line, "nothing compared: the scenario declares no value checks (its hazards are the simulator's)");
}

TEST(Oracle, a_gate_that_gave_up_makes_the_comparison_inconclusive) {
  GpuRunResult gpu = gpu_with({5, 6, 7, 8});
  gpu.gate_timed_out = true;
  const OracleVerdict v = judge(gpu);
  EXPECT_FALSE(v.agree);
  EXPECT_TRUE(v.cut_short);
  EXPECT_EQ(v.line.rfind("not compared: a gate gave up", 0), 0u) << v.line;
}

TEST(Oracle, a_failed_data_check_stays_a_disagreement_when_a_gate_also_gave_up) {
  GpuRunResult gpu = gpu_with({5, 6, 7, 8});
  gpu.gate_timed_out = true;
  gpu.data_check_wrong = 2;
  const OracleVerdict v = judge(gpu);
  EXPECT_FALSE(v.agree);
  EXPECT_FALSE(v.cut_short) << v.line;
}

TEST(Oracle, a_mismatch_is_named) {
  const OracleVerdict v = judge(gpu_with({5, 6, 3, 8}));
  EXPECT_FALSE(v.agree);
  ASSERT_TRUE(v.mismatch.has_value());
  EXPECT_EQ(v.line, v.mismatch->describe());
}

}  // namespace
}  // namespace amaxcheck::gpu
