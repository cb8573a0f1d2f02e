// Kernels run on views of their ranges found when the engine is built (OpPlan). A kernel whose
// range lies outside its buffer has none: the engine is still built, and the range is reported
// when the kernel runs, as before there were plans.
#include <gtest/gtest.h>

#include <string>

#include "engine/engine.h"
#include "model/builder.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

TEST(OpPlan, a_kernel_range_outside_its_buffer_is_reported_when_the_kernel_runs) {
  ScenarioBuilder b("bad range");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId s = b.stream(r, "compute");
  const BufferId x = b.buffer(r, "x", 2);
  b.op(r, t, ScenarioBuilder::fill(s, {x, 0, 2}, {1.0f, 2.0f}, "good"));
  b.op(r, t, ScenarioBuilder::fill(s, {x, 1, 2}, {3.0f, 4.0f}, "past_the_end"));
  const Scenario scenario = b.build();  // not validated: the builder takes what it is given
  Engine engine(scenario);
  const Action issue{ActionKind::issue, r, t}, execute{ActionKind::execute, r, s};
  engine.apply(issue);
  engine.apply(issue);
  engine.apply(execute);
  EXPECT_EQ(engine.read(r, {x, 0, 2}), (std::vector<float>{1.0f, 2.0f}));
  try {
    engine.apply(execute);
    ADD_FAILURE() << "the range past the end of x ran";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("range outside its buffer"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace amaxcheck
