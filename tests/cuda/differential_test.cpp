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

}  // namespace
}  // namespace amaxcheck::gpu
