// Engine::reset puts a run's state back to what the constructor left: the buffers' values (each
// buffer's init values, zeros after them), whatever the run before wrote; the rendezvous a run
// left pending (kept as spares, reused by later collectives); the reused step of step_enabled.
// (The event records, reused and pending again when issued: kept_lanes_test.cpp.)
#include <gtest/gtest.h>

#include <string>
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

/// Two ranks, each with two all-reduces on one communicator and a kernel between them.
Scenario two_collectives() {
  ScenarioBuilder b("reset_collectives");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId dp = b.comm("dp", {r0, r1});
  for (const RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId amax = b.buffer(r, "amax", 2, {static_cast<float>(r + 1), static_cast<float>(2 * r)});
    b.op(r, t, ScenarioBuilder::all_reduce(s, dp, {amax, 0, 2}, {amax, 0, 2}, "first"));
    b.op(r, t, ScenarioBuilder::fill(s, {amax, 0, 1}, {static_cast<float>(7 - r)}));
    b.op(r, t, ScenarioBuilder::all_reduce(s, dp, {amax, 0, 2}, {amax, 0, 2}, "second"));
    b.op(r, t, ScenarioBuilder::host(OpKind::stream_synchronize, s, "sync"));
  }
  return b.build();
}

/// A step as text, every field: index, action, op, name, lane, collective, touches, written.
std::string describe(const Step& step) {
  std::string text = std::to_string(step.index) + " " + to_string(step.action.kind) + " " + std::to_string(step.action.rank) +
                     " " + std::to_string(step.action.lane) + " op " + std::to_string(step.op.rank) + "." +
                     std::to_string(step.op.thread) + "." + std::to_string(step.op.index) + " '" + step.op_name + "' '" +
                     step.lane + "' " + std::to_string(step.collective) + " " + std::to_string(step.comm) + " " +
                     std::to_string(step.seq);
  for (const Touch& t : step.touches) text += " t" + std::to_string(t.object) + (t.write ? "w" : "r") + (t.needs ? "n" : "");
  for (const WrittenValues& w : step.written) {
    text += " w" + std::to_string(w.rank) + ":" + std::to_string(w.range.buffer);
    for (float v : w.values) text += "," + std::to_string(v);
  }
  return text;
}

/// What engine.stuck() says now (a pending rendezvous shows in who it says has joined).
std::string stuck_text(const Engine& engine) {
  std::string text;
  for (const Stuck& s : engine.stuck()) {
    text += s.lane + ": " + s.waiting_for + " [" + s.awaited + "] missing";
    for (RankId r : s.missing_ranks) text += " " + std::to_string(r);
    for (const std::string& b : s.blocked) text += "; " + b;
    text += "\n";
  }
  return text;
}

/// Every step of a run that always takes enabled action `pick` (or the last, if fewer), until
/// `stop_after` steps or the end; and the final values of both ranks' amax.
std::vector<std::string> run_picking(Engine& engine, std::size_t pick, std::size_t stop_after = 1000) {
  std::vector<std::string> steps;
  while (!engine.enabled().empty() && steps.size() < stop_after) {
    steps.push_back(describe(engine.step_enabled(std::min(pick, engine.enabled().size() - 1))));
  }
  if (engine.enabled().empty()) {
    for (RankId r = 0; r < 2; ++r) {
      for (float v : engine.read(r, {0, 0, 2})) steps.push_back(std::to_string(v));
    }
  }
  return steps;
}

TEST(EngineReset, a_reset_engine_runs_as_a_new_one_after_a_run_left_collectives_pending) {
  const Scenario scenario = two_collectives();
  for (std::size_t pick = 0; pick < 3; ++pick) {
    Engine fresh(scenario);
    const std::vector<std::string> expected = run_picking(fresh, pick);
    ASSERT_GT(expected.size(), 10u);
    Engine reused(scenario);
    // Runs that stop after each prefix: some leave a rendezvous joined by one member, some two.
    for (std::size_t stop = 1; stop < 16; ++stop) {
      Engine stopped(scenario);
      EXPECT_EQ(run_picking(reused, (pick + stop) % 3, stop), run_picking(stopped, (pick + stop) % 3, stop));
      EXPECT_EQ(stuck_text(reused), stuck_text(stopped)) << "pick " << pick << ", stopped at step " << stop;
      reused.reset(EngineOptions{});
      EXPECT_EQ(run_picking(reused, pick), expected) << "pick " << pick << ", after a run stopped at step " << stop;
      reused.reset(EngineOptions{});
    }
  }
}

TEST(EngineReset, a_run_without_step_detail_after_one_with_it_gets_empty_names_touches_and_values) {
  const Scenario scenario = two_collectives();
  Engine engine(scenario);
  run_picking(engine, 0);  // full detail: names, touches and written values
  EngineOptions bare;
  bare.step_detail = StepDetail{false, false, false};
  engine.reset(bare);
  Engine fresh(scenario, bare);
  EXPECT_EQ(run_picking(engine, 1), run_picking(fresh, 1));
}

}  // namespace
}  // namespace amaxcheck
