// amaxcheck demo: the four seed design points at 8 ranks, each checked against what the
// design notes predict (shared/DESIGN.md section 2).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "cli/check_runner.h"
#include "cli/commands.h"
#include "cli/hazard_report.h"
#include "cli/verdict_report.h"
#include "protocols/protocol.h"
#include "export/perfetto.h"

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
  std::string tally;  ///< hazards per kind and how many tensors, buffers or comms they are about
  std::string explored;
  double seconds = 0;
  sched::VerdictKind kind = sched::VerdictKind::no_hazard_found;
  std::string cut_short;  ///< why an inconclusive row is one
  bool as_predicted = false;
  std::string trace, timeline;
};

struct DemoOptions {
  std::string out_dir = "out/demo";
  std::uint64_t runs = 200;
  double proof_budget_s = 10;  ///< the exhaustive attempt at the clean design; 0 = sample only
};

Row check_point(const DesignPoint& point, const DemoOptions& demo, std::string& proof_note) {
  const ProtocolKnobs knobs = knobs_for(point);
  const Scenario scenario = build_protocol(knobs);
  CheckRequest request;
  request.iterations = knobs.iters;
  request.separate_amax_comm = knobs.comm == CommChoice::separate;
  request.trace_out = fmt::format("{}/{}.trace.jsonl", demo.out_dir, slug(point.label));
  std::optional<CheckOutcome> proof;
  // A design predicted clean is first searched exhaustively; only a completed search proves it.
  if (point.expected.empty() && demo.proof_budget_s > 0) {
    request.explore.strategy = sched::StrategyKind::exhaustive;
    request.explore.time_budget_s = demo.proof_budget_s;
    request.explore.progress = stderr_progress("schedules");
    proof = run_check(scenario, request);
    if (proof->result.verdict == sched::VerdictKind::proven_clean) {
      proof_note = fmt::format("{}: proven clean by an exhaustive search ({} schedules, {:.1f} s)", point.label,
                               proof->result.runs, proof->seconds);
    } else {
      proof_note = fmt::format(
          "{}: sampled, not proven: the exhaustive search was {} after {:.0f} s ({} schedules; `amaxcheck demo "
          "--proof-budget SECONDS` gives it longer)",
          point.label, verdict_headline(proof->result), proof->seconds, proof->result.runs);
    }
  }
  const bool proven = proof && proof->result.verdict == sched::VerdictKind::proven_clean;
  const bool hazard_in_proof = proof && proof->result.verdict == sched::VerdictKind::hazard;
  if (!proven && !hazard_in_proof) {
    request.explore = sched::ExploreOptions{};
    request.explore.strategy = sched::StrategyKind::random;
    request.explore.runs = demo.runs;
  }
  const CheckOutcome outcome = proven || hazard_in_proof ? std::move(*proof) : run_check(scenario, request);
  Row row;
  row.design = point.label;
  std::set<HazardKind> found;
  std::vector<Hazard> hazards;
  for (const auto& f : outcome.result.hazards) {
    found.insert(f.hazard.kind);
    hazards.push_back(f.hazard);
  }
  row.kind = outcome.result.verdict;
  // "proven clean" only from a completed search; a sample says "no hazard found".
  row.verdict = row.kind == sched::VerdictKind::hazard ? "HAZARD" : verdict_headline(outcome.result);
  row.kinds = hazard_kinds(hazards);
  row.tally = hazard_tally(hazards);
  row.explored = fmt::format("{} {}, {} steps", outcome.result.runs, proven ? "schedules" : "run(s)",
                             outcome.result.steps);
  row.seconds = outcome.seconds;
  const auto notes = verdict_notes(outcome.result, request.explore);
  if (row.kind == sched::VerdictKind::inconclusive && !notes.empty()) row.cut_short = notes.front();
  row.as_predicted = point.expected.empty()
                         ? found.empty() && row.kind != sched::VerdictKind::inconclusive
                         : std::includes(found.begin(), found.end(), point.expected.begin(), point.expected.end());
  if (outcome.trace) {
    row.trace = outcome.trace_path;
    row.timeline = fmt::format("{}/{}.perfetto.json", demo.out_dir, slug(point.label));
    sched::write_chrome_trace_file(row.timeline, *outcome.trace);
  }
  return row;
}

int run_demo(const DemoOptions& demo) {
  std::filesystem::create_directories(demo.out_dir);
  fmt::print("amaxcheck demo: the seed design points of async amax reduction (te-async, 8 ranks, 4 modules,\n"
             "2 iterations x 2 microbatches, rank-dependent backward amax launch order; the clean design is\n"
             "searched exhaustively for {:g} s, and sampled with random schedules if that does not complete)\n\n",
             demo.proof_budget_s);
  fmt::print("{:<34} {:<15} {:<42} {:<26} {:>7}  {}\n", "design", "verdict", "hazard kinds", "explored", "time",
             "as predicted");
  bool all_as_predicted = true;
  bool any_inconclusive = false;
  std::vector<Row> rows;
  std::vector<std::string> proof_notes;
  for (const DesignPoint& point : seed_design_points()) {
    std::string proof_note;
    Row row = check_point(point, demo, proof_note);
    if (!proof_note.empty()) proof_notes.push_back(proof_note);
    all_as_predicted &= row.as_predicted;
    any_inconclusive |= row.kind == sched::VerdictKind::inconclusive;
    const std::string why = row.cut_short.empty() ? point.why : row.cut_short;
    fmt::print("{:<34} {:<15} {:<42} {:<26} {:>6.2f}s  {}\n", row.design, row.verdict, row.kinds, row.explored,
               row.seconds, row.as_predicted ? "yes" : "NO (" + why + ")");
    rows.push_back(std::move(row));
  }
  for (const std::string& note : proof_notes) fmt::print("\n{}\n", note);
  fmt::print("\ncounterexamples (replay with `amaxcheck replay TRACE`, open timelines in ui.perfetto.dev):\n");
  for (const Row& row : rows) {
    if (row.trace.empty()) continue;
    fmt::print("  {}\n    hazards:  {}\n    trace:    {}\n    timeline: {}\n", row.design, row.tally, row.trace,
               row.timeline);
  }
  fmt::print("\n{}\n", all_as_predicted ? "every verdict matches the design notes"
                                        : "some verdicts differ from the design notes: see the NO rows");
  if (all_as_predicted) return exit_clean;
  return any_inconclusive ? exit_inconclusive : exit_hazard;
}

}  // namespace

void register_demo(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "check the four seed design points at 8 ranks and print a table");
  auto demo = std::make_shared<DemoOptions>();
  sub->add_option("--out", demo->out_dir, "folder for the counterexamples' traces and timelines")->capture_default_str();
  sub->add_option("--runs", demo->runs, "random schedules per design point that is not proven")->capture_default_str();
  sub->add_option("--proof-budget", demo->proof_budget_s,
                  "seconds for the exhaustive search of the clean design (0 = sample it only)")
      ->capture_default_str();
  sub->footer(exit_codes_help);
  add_command(app, sub, [demo] { return run_demo(*demo); });
}

}  // namespace amaxcheck::cli
