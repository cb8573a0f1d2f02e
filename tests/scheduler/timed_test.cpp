// Timed runs: a discrete-event schedule under a cost model, and the timeline export.
#include "scheduler/timed_strategy.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>

#include "export/perfetto.h"
#include "trace/reproduce.h"
#include "scheduler/run.h"
#include "scenarios.h"
#include "scheduler/random_strategy.h"

namespace amaxcheck::sched {
namespace {

TEST(CostModel, collectives_cost_alpha_plus_beta_times_bytes_times_the_ring_factor) {
  CostModel cost;
  cost.topology = *topology_preset("flat");
  cost.alpha_us = 10;
  cost.beta_us_per_byte = 0.5;
  Op op;
  op.kind = OpKind::all_reduce;
  op.reads = {Range{0, 0, 4}};
  op.writes = {Range{0, 0, 4}};
  EXPECT_DOUBLE_EQ(cost.collective_us(op, 4), 10 + 0.5 * 16 * (2.0 * 3 / 4));
  op.dtype = Dtype::bf16;
  EXPECT_DOUBLE_EQ(cost.collective_us(op, 4), 10 + 0.5 * 8 * (2.0 * 3 / 4));
  cost.algo = CollectiveAlgo::tree;
  EXPECT_DOUBLE_EQ(cost.collective_us(op, 4), 10 + 0.5 * 8 * 2.0);
  EXPECT_DOUBLE_EQ(cost.collective_us(op, 1), 10) << "one member moves nothing";
  Op kernel;
  kernel.kind = OpKind::copy;
  kernel.cost_us = 7;
  EXPECT_DOUBLE_EQ(cost.execute_us(kernel), 7);
  EXPECT_DOUBLE_EQ(cost.issue_us(kernel), cost.launch_overhead_us);
  EXPECT_DOUBLE_EQ(cost.issue_us(ScenarioBuilder::host(OpKind::host_signal)), 0);
}

TEST(Timed, ops_run_in_end_time_order_and_each_rank_gets_its_iteration_time) {
  const Scenario s = testing::wait_after_copy(2, false);
  CostModel cost;
  TimedStrategy timed(s, cost);
  RunOptions options;
  const RunResult run = run_once(s, timed, options);
  ASSERT_EQ(run.outcome, RunOutcome::finished);
  const TimedRun& t = timed.timing();
  ASSERT_EQ(t.steps.size(), run.step_count);
  for (std::size_t i = 1; i < t.steps.size(); ++i) EXPECT_LE(t.steps[i - 1].end_us, t.steps[i].end_us) << "step " << i;
  ASSERT_EQ(t.rank_end_us.size(), 2u);
  EXPECT_DOUBLE_EQ(t.rank_end_us[0], t.rank_end_us[1]) << "symmetric ranks";
  EXPECT_DOUBLE_EQ(t.makespan_us, t.rank_end_us[0]);
  // Every op ran; the all-reduce spans its join to its completion and lasts at least alpha.
  ASSERT_EQ(t.ops.size(), 14u);
  for (const OpTiming& op : t.ops) {
    EXPECT_TRUE(op.executed) << op.name;
    EXPECT_LE(op.issue_start_us, op.issue_end_us);
    EXPECT_LE(op.start_us, op.end_us);
    if (op.kind == OpKind::all_reduce) {
      EXPECT_GE(op.end_us - op.start_us, cost.alpha_us);
    }
    if (op.kind == OpKind::copy) {
      const OpTiming* reduce = nullptr;
      for (const OpTiming& other : t.ops) {
        if (other.kind == OpKind::all_reduce && other.op.rank == op.op.rank) reduce = &other;
      }
      ASSERT_NE(reduce, nullptr);
      EXPECT_GE(op.start_us, reduce->end_us) << "the fixed design copies after the reduction completed";
    }
  }
}

TEST(Timed, a_slower_collective_lengthens_the_iteration) {
  const Scenario s = testing::wait_after_copy(2, false);
  CostModel fast, slow;
  fast.topology = slow.topology = *topology_preset("flat");
  slow.alpha_us = fast.alpha_us + 100;
  TimedStrategy a(s, fast), b(s, slow);
  run_once(s, a);
  run_once(s, b);
  // The extra 100 us are exposed, except the part the fast run already spent waiting on host
  // issue overheads after its all-reduce completed.
  const double extra = b.timing().makespan_us - a.timing().makespan_us;
  EXPECT_GT(extra, 100 - 2 * fast.launch_overhead_us);
  EXPECT_LE(extra, 100 + 1e-9);
}

/// The trace of the first failing random run (seed 3) of wait-after-copy at two ranks: a race
/// between the copy-back and the reduction.
std::optional<Trace> wait_after_copy_failure() {
  const Scenario s = testing::wait_after_copy(2);
  ExploreOptions options;
  options.seed = 3;
  const ExploreResult r = explore(s, options);
  if (!r.first_failure) return std::nullopt;
  return failure_trace(s, options, *r.first_failure);
}

TEST(Perfetto, exports_rank_processes_lane_tracks_flows_and_hazard_markers) {
  const std::optional<Trace> trace = wait_after_copy_failure();
  ASSERT_TRUE(trace);
  const auto chrome = to_chrome_trace(*trace);
  std::set<std::string> phases, thread_names;
  std::set<std::uint64_t> pids;
  int flows = 0, hazards = 0, collectives = 0;
  for (const auto& e : chrome["traceEvents"]) {
    phases.insert(e["ph"].get<std::string>());
    pids.insert(e["pid"].get<std::uint64_t>());
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "s" || e["ph"] == "f") ++flows;
    if (e["ph"] == "i" && e["cat"] == "hazard") ++hazards;
    if (e["ph"] == "X" && e["cat"] == "collective") ++collectives;
  }
  EXPECT_EQ(pids, (std::set<std::uint64_t>{0, 1}));
  EXPECT_EQ(thread_names, (std::set<std::string>{"thread main", "stream compute", "stream amax"}));
  EXPECT_EQ(collectives, 2) << "one all-reduce slice per member";
  EXPECT_EQ(flows, 2) << "a flow from one member's all-reduce to the other's";
  EXPECT_GT(hazards, 0);
}

/// The events of a Chrome trace whose phase is `ph` and category `cat`.
std::vector<nlohmann::ordered_json> events_of(const nlohmann::ordered_json& chrome, const char* ph, const char* cat) {
  std::vector<nlohmann::ordered_json> out;
  for (const auto& e : chrome["traceEvents"]) {
    if (e["ph"] == ph && e.contains("cat") && e["cat"] == cat) out.push_back(e);
  }
  return out;
}

TEST(Perfetto, each_hazard_marker_sits_at_its_participant_s_step) {
  const std::optional<Trace> trace = wait_after_copy_failure();
  ASSERT_TRUE(trace);
  const auto markers = events_of(to_chrome_trace(*trace), "i", "hazard");
  ASSERT_FALSE(markers.empty());
  for (const auto& m : markers) {
    // Untimed, a step's slice starts at the step's number.
    EXPECT_EQ(m["ts"].get<double>(), static_cast<double>(m["args"]["step"].get<std::size_t>())) << m.dump();
  }
  std::set<std::size_t> steps;
  for (const auto& m : markers) steps.insert(m["args"]["step"].get<std::size_t>());
  EXPECT_GE(steps.size(), 2u) << "a race's two sides are two steps";
}

TEST(Perfetto, a_collective_that_never_completed_shows_its_joins_as_such) {
  // Rank 0's amax all-reduce joins and waits for ever: rank 1 issued its own behind a gradient
  // bucket that rank 0 never issues.
  const Scenario s = testing::issued_behind_a_collective_never_matched();
  RandomStrategy random(1);
  const RunResult run = run_once(s, random);
  ASSERT_EQ(run.outcome, RunOutcome::stuck);
  const auto slices = events_of(to_chrome_trace(make_trace(s, run, TraceOrigin{"random", 1, 0, {}})), "X", "collective");
  ASSERT_EQ(slices.size(), 2u) << "rank 0's amax_reduce and rank 1's grad_bucket joined, neither completed";
  for (const auto& slice : slices) {
    EXPECT_TRUE(slice["name"].get<std::string>().ends_with(" (never completed)")) << slice.dump();
    EXPECT_EQ(slice["args"]["completed"], false) << slice.dump();
  }
}

TEST(Perfetto, a_timed_trace_is_laid_out_in_the_cost_model_s_microseconds) {
  const Scenario s = testing::wait_after_copy(2, false);
  CostModel cost;
  TimedStrategy timed(s, cost);
  const RunResult run = run_once(s, timed);
  ASSERT_EQ(run.outcome, RunOutcome::finished);
  const Trace trace = make_trace(s, run, TraceOrigin{"timed", 0, 0, {}}, {}, &timed.timing());
  const auto chrome = to_chrome_trace(trace);
  EXPECT_EQ(chrome["otherData"]["time"], "microseconds (cost model)");
  std::map<std::size_t, std::pair<double, double>> span_of_step;
  for (const TraceStep& step : trace.steps) {
    ASSERT_TRUE(step.timing.has_value());
    span_of_step[step.step] = {step.timing->start_us, step.timing->end_us};
  }
  std::size_t checked = 0;
  for (const char* cat : {"issue", "execute"}) {
    for (const auto& slice : events_of(chrome, "X", cat)) {
      const auto [start, end] = span_of_step.at(slice["args"]["step"].get<std::size_t>());
      EXPECT_DOUBLE_EQ(slice["ts"].get<double>(), start) << slice.dump();
      EXPECT_DOUBLE_EQ(slice["dur"].get<double>(), end - start) << slice.dump();
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
  EXPECT_GT(trace.summary.makespan_us, static_cast<double>(trace.steps.size())) << "microseconds, not step numbers";
}

}  // namespace
}  // namespace amaxcheck::sched
