// Engine::reset puts a run's state back to what the constructor left: here, the buffers' values
// (each buffer's init values, zeros after them), whatever the run before wrote.
#include <gtest/gtest.h>

#include <vector>

#include "engine/engine.h"
#include "model/builder.h"

namespace amaxcheck {
namespace {

TEST(EngineReset, buffers_go_back_to_their_init_values_and_zeros_after_them) {
  ScenarioBuilder b("reset_buffers");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId s = b.stream(r, "compute");
  const BufferId partial = b.buffer(r, "partial", 5, {1.0f, 2.0f});
  const BufferId full = b.buffer(r, "full", 2, {3.0f, 4.0f});
  const BufferId zeros = b.buffer(r, "zeros", 3);
  b.op(r, t, ScenarioBuilder::fill(s, {partial, 0, 5}, {9.0f, 9.0f, 9.0f, 9.0f, 9.0f}));
  b.op(r, t, ScenarioBuilder::fill(s, {full, 0, 2}, {9.0f, 9.0f}));
  b.op(r, t, ScenarioBuilder::fill(s, {zeros, 0, 3}, {9.0f, 9.0f, 9.0f}));
  const Scenario scenario = b.build();
  Engine engine(scenario);
  for (int run = 0; run < 2; ++run) {
    EXPECT_EQ(engine.read(r, {partial, 0, 5}), (std::vector<float>{1.0f, 2.0f, 0.0f, 0.0f, 0.0f})) << run;
    EXPECT_EQ(engine.read(r, {full, 0, 2}), (std::vector<float>{3.0f, 4.0f})) << run;
    EXPECT_EQ(engine.read(r, {zeros, 0, 3}), (std::vector<float>{0.0f, 0.0f, 0.0f})) << run;
    run_first_enabled(engine);
    EXPECT_EQ(engine.read(r, {partial, 0, 5}), (std::vector<float>(5, 9.0f))) << run;
    engine.reset(EngineOptions{});
  }
}

}  // namespace
}  // namespace amaxcheck
