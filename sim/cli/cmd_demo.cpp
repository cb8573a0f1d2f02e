// amaxcheck demo: the four seed design points at 8 ranks, each checked against what the
// design notes predict (shared/DESIGN.md section 2).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "cli/check_runner.h"
#include "cli/commands.h"
#include "cli/hazard_report.h"
#include "protocols/protocol.h"
#include "scheduler/perfetto.h"

namespace amaxcheck::cli {
namespace {

struct DesignPoint {
  std::string label;
  CommChoice comm;
  WaitPoint wait;
  std::set<HazardKind> expected;  ///< kinds that must be found; empty means the design is clean
  std::string why;
};

std::vector<DesignPoint> seed_design_points() {
  return {
      {"separate comm, wait before copy", CommChoice::separate, WaitPoint::before_copy, {}, "the fix: own communicator, wait first"},
      {"separate comm, wait after copy", CommChoice::separate, WaitPoint::after_copy, {HazardKind::data_race},
       "copy-back reads the buffer NCCL is still reducing"},
      {"shared comm, wait before copy", CommChoice::shared, WaitPoint::before_copy, {HazardKind::collective_mismatch},
       "rank-dependent amax launch order mismatches the gradient buckets"},
      {"shared comm, wait after copy", CommChoice::shared, WaitPoint::after_copy,
       {HazardKind::data_race, HazardKind::collective_mismatch}, "both seed hazards"},
  };
}

/// The design point as a protocol: te-async at 8 ranks, 4 modules, 2 iterations of 2
/// microbatches, the backward amax reduction launched at a rank-dependent point.
ProtocolKnobs knobs_for(const DesignPoint& point) {
  ProtocolKnobs knobs;
  knobs.protocol = ProtocolName::te_async;
  knobs.comm = point.comm;
  knobs.wait = point.wait;
  knobs.amax_order = AmaxOrder::rank_dependent;
  knobs.dp = 8;
  knobs.modules = 4;
  knobs.iters = 2;
  knobs.microbatches = 2;
  return knobs;
}

struct Row {
  std::string design;
  std::string verdict;
  std::string kinds;
  std::string explored;
  double seconds = 0;
  bool as_predicted = false;
  std::string trace, timeline;
};

Row check_point(const DesignPoint& point, const std::string& out_dir, std::uint64_t runs) {
  const ProtocolKnobs knobs = knobs_for(point);
  const Scenario scenario = build_protocol(knobs);
  CheckRequest request;
  request.explore.strategy = sched::StrategyKind::random;
  request.explore.runs = runs;
  request.iterations = knobs.iters;
  request.separate_amax_comm = knobs.comm == CommChoice::separate;
  request.trace_out = fmt::format("{}/{}.trace.jsonl", out_dir, slug(point.label));
  const CheckOutcome outcome = run_check(scenario, request);
  Row row;
  row.design = point.label;
  std::set<HazardKind> found;
  std::vector<Hazard> hazards;
  for (const auto& f : outcome.result.hazards) {
    found.insert(f.hazard.kind);
    hazards.push_back(f.hazard);
  }
  row.verdict = hazards.empty() ? "clean" : "HAZARD";
  row.kinds = hazard_kinds(hazards);
  row.explored = fmt::format("{} run(s), {} steps", outcome.result.runs, outcome.result.steps);
  row.seconds = outcome.seconds;
  row.as_predicted = point.expected.empty() ? found.empty()
                                            : std::includes(found.begin(), found.end(), point.expected.begin(), point.expected.end());
  if (outcome.trace) {
    row.trace = outcome.trace_path;
    row.timeline = fmt::format("{}/{}.perfetto.json", out_dir, slug(point.label));
    sched::write_chrome_trace_file(row.timeline, *outcome.trace);
  }
  return row;
}

int run_demo(const std::string& out_dir, std::uint64_t runs) {
  std::filesystem::create_directories(out_dir);
  fmt::print("amaxcheck demo: the seed design points of async amax reduction (te-async, 8 ranks, 4 modules,\n"
             "2 iterations x 2 microbatches, rank-dependent backward amax launch order, random schedules)\n\n");
  fmt::print("{:<34} {:<8} {:<42} {:<26} {:>7}  {}\n", "design", "verdict", "hazard kinds", "explored", "time", "as predicted");
  bool all_as_predicted = true;
  std::vector<Row> rows;
  for (const DesignPoint& point : seed_design_points()) {
    Row row = check_point(point, out_dir, runs);
    all_as_predicted &= row.as_predicted;
    fmt::print("{:<34} {:<8} {:<42} {:<26} {:>6.2f}s  {}\n", row.design, row.verdict, row.kinds, row.explored, row.seconds,
               row.as_predicted ? "yes" : "NO (" + point.why + ")");
    rows.push_back(std::move(row));
  }
  fmt::print("\ncounterexamples (replay with `amaxcheck replay TRACE`, open timelines in ui.perfetto.dev):\n");
  for (const Row& row : rows) {
    if (row.trace.empty()) continue;
    fmt::print("  {}\n    trace:    {}\n    timeline: {}\n", row.design, row.trace, row.timeline);
  }
  fmt::print("\n{}\n", all_as_predicted ? "every verdict matches the design notes"
                                        : "some verdicts differ from the design notes: see the NO rows");
  return all_as_predicted ? exit_clean : exit_hazard;
}

}  // namespace

void register_demo(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "check the four seed design points at 8 ranks and print a table");
  auto out_dir = std::make_shared<std::string>("out/demo");
  auto runs = std::make_shared<std::uint64_t>(200);
  sub->add_option("--out", *out_dir, "folder for the counterexamples' traces and timelines")->capture_default_str();
  sub->add_option("--runs", *runs, "random schedules per design point")->capture_default_str();
  add_command(app, sub, [out_dir, runs] { return run_demo(*out_dir, *runs); });
}

}  // namespace amaxcheck::cli
