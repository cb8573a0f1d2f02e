// amaxcheck check: explore a protocol or scenario file and report its verdict.
#include <fmt/format.h>

#include <memory>

#include "cli/check_gpu.h"
#include "cli/check_runner.h"
#include "cli/commands.h"
#include "cli/hazard_report.h"
#include "cli/junit_xml.h"
#include "cli/scenario_target.h"
#include "cli/strategy_options.h"
#include "cli/verdict_report.h"
#include "cli/whole_number.h"
#include "model/split_communicators.h"
#include "trace/reproduce.h"
#include "scheduler/strategy_table.h"
#include "util/atomic_file.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck::cli {
namespace {

struct CheckArgs {
  ScenarioTarget target;
  std::string strategy = "random";
  std::uint64_t seed = 0;
  std::uint64_t runs = 200;
  sched::StrategyArgs strategy_args;  ///< every strategy's parameters given (strategy_options.h)
  unsigned jobs = 1;
  bool keep_going = false;
  std::size_t max_steps = 0;
  double time_budget_s = 0;
  bool no_progress = false;
  std::string trace_out;
  std::string junit_xml;
  bool json = false;
  bool check_determinism = false;
  std::string backend = "sim";
  bool one_rank_comms = false;
};

sched::ExploreOptions explore_options(const CheckArgs& args) {
  sched::ExploreOptions o;
  const sched::StrategyEntry& entry = sched::strategy_entry(args.strategy);
  sched::check_strategy_args(entry, args.strategy_args);
  o.strategy = entry.name;
  o.args = args.strategy_args;
  o.seed = args.seed;
  // No runs show nothing: a sampled check of zero runs would say "no hazard found" about a
  // design it never ran.
  if (args.runs == 0) throw InputError("--runs: expected at least 1");
  o.runs = args.runs;
  o.jobs = std::max(1u, args.jobs);
  o.stop_at_first = !args.keep_going;
  o.run.max_steps = args.max_steps;
  // Written so that NaN, for which every comparison is false, is refused too.
  if (!(args.time_budget_s >= 0)) throw InputError("--time-budget: expected seconds >= 0 (0 = none)");
  if (args.time_budget_s > 0) o.time_budget_s = args.time_budget_s;
  if (!args.no_progress) o.progress = stderr_progress(entry.coverage == sched::Coverage::exhaustive ? "schedules" : "runs");
  return o;
}

nlohmann::ordered_json to_json(const Scenario& scenario, const CheckArgs& args, const CheckOutcome& outcome) {
  const auto& r = outcome.result;
  nlohmann::ordered_json j;
  j["scenario"] = scenario.name;
  j["source"] = scenario.source;
  j["verdict"] = sched::to_string(r.verdict);
  j["strategy"] = args.strategy;
  j["seed"] = args.seed;
  j["runs"] = r.runs;
  j["steps"] = r.steps;
  j["complete"] = r.coverage_complete;
  j["pruned"] = r.pruned;
  j["step_cap"] = r.step_cap;
  j["cut_short"] = cut_short_json(r);
  j["seconds"] = outcome.seconds;
  j["trace"] = outcome.trace_path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(escape_invalid_utf8(outcome.trace_path));
  j["hazards"] = nlohmann::ordered_json::array();
  std::vector<Hazard> hazards;
  for (std::size_t i = 0; i < r.hazards.size(); ++i) {
    const auto& found = r.hazards[i];
    j["hazards"].push_back(hazard_json(found.hazard, outcome.replays[i]));
    hazards.push_back(found.hazard);
  }
  j["groups"] = hazard_groups_json(hazards);
  if (outcome.cost) {
    j["timing"] = {{"iteration_time_us", outcome.cost->iteration_time_us},
                   {"exposed_amax_latency_us", outcome.cost->exposed_amax_latency_us},
                   {"amax_queued_us", outcome.cost->amax_queued_us},
                   {"extra_comm_memory_bytes", outcome.cost->extra_comm_memory_bytes},
                   {"amax_algo", outcome.cost->amax_algo},
                   {"amax_collective_us", outcome.cost->amax_collective_us}};
  }
  return j;
}

void print_human(const Scenario& scenario, const CheckArgs& args, const CheckRequest& request, const CheckOutcome& outcome) {
  const auto& r = outcome.result;
  fmt::print("{} ({}, seed {})\n", scenario.source.empty() ? scenario.name : scenario.source, args.strategy, args.seed);
  std::string coverage;
  if (r.exhaustive) {
    const bool stopped_at_hazard = r.verdict == sched::VerdictKind::hazard && !r.exhaustive->complete && !r.cut_short.any();
    coverage = fmt::format(", {} pruned, search {}", r.pruned,
                           r.coverage_complete ? "complete"
                           : stopped_at_hazard ? "stopped at the first hazard (--keep-going continues)"
                                               : "incomplete");
  }
  fmt::print("verdict: {} after {} run(s), {} steps, {:.2f} s{}\n", verdict_headline(r), r.runs, r.steps,
             outcome.seconds, coverage);
  for (const std::string& line : verdict_notes(r, request.explore)) fmt::print("{}\n", line);
  if (outcome.cost) {
    fmt::print("timing: iteration {:.1f} us, exposed amax latency {:.1f} us, amax queued {:.1f} us, extra comm memory {} MiB"
               " (amax all-reduce: {}, {:.1f} us alone)\n",
               outcome.cost->iteration_time_us, outcome.cost->exposed_amax_latency_us, outcome.cost->amax_queued_us,
               outcome.cost->extra_comm_memory_bytes >> 20, outcome.cost->amax_algo, outcome.cost->amax_collective_us);
  } else if (r.timing && !r.timing->finished) {
    fmt::print("timing: none: the timed run got stuck, and the time up to a hang is no iteration time\n");
  }
  std::vector<Hazard> hazards;
  for (const auto& found : r.hazards) hazards.push_back(found.hazard);
  fmt::print("{}", format_hazard_groups(hazards, outcome.replays));
}

/// The check as a one-testcase JUnit report: a hazard fails it (the message is the first
/// hazard's summary), an inconclusive check is an error, and the system-out is the replay
/// command (or, without a hazard, what the verdict rests on).
JunitSuite junit_of(const Scenario& scenario, const CheckRequest& request, const CheckOutcome& outcome) {
  const auto& r = outcome.result;
  JunitCase c;
  c.classname = "amaxcheck.check";
  c.name = scenario.source.empty() ? scenario.name : scenario.source;
  c.time_s = outcome.seconds;
  const std::vector<std::string> notes = verdict_notes(r, request.explore);
  std::string notes_text;
  for (const std::string& line : notes) notes_text += line + "\n";
  std::vector<Hazard> hazards;
  for (const auto& found : r.hazards) hazards.push_back(found.hazard);
  if (r.verdict == sched::VerdictKind::hazard) {
    c.outcome = JunitCase::Outcome::failure;
    c.type = "hazard";
    c.message = fmt::format("{}: {}", to_string(hazards.front().kind), hazards.front().summary);
    c.text = verdict_headline(r) + "\n" + notes_text + format_hazard_groups(hazards, outcome.replays);
    c.system_out = outcome.replay;
  } else {
    if (r.verdict == sched::VerdictKind::inconclusive) {
      c.outcome = JunitCase::Outcome::error;
      c.type = "inconclusive";
      c.message = notes.empty() ? "inconclusive" : notes.front();
      c.text = notes_text;
    }
    c.system_out = verdict_headline(r) + "\n" + notes_text;
  }
  return {"amaxcheck check", {c}};
}

int run(CheckArgs& args) {
  const unsigned jobs = std::max(1u, args.jobs);
  // A plain check records only a hazard's run; --check-determinism records runs up front.
  const Recording recording = args.check_determinism ? Recording::always : Recording::on_hazard;
  const Scenario scenario = args.one_rank_comms ? split_communicators_per_rank(args.target.load(jobs, recording))
                                                : args.target.load(jobs, recording);
  // Both optional (empty: none, or the default trace path).
  if (!args.trace_out.empty() && !args.target.from_protocol) {
    check_distinct_files(args.trace_out, "--trace-out", args.target.target, "scenario file");
  }
  if (!args.junit_xml.empty()) {
    if (!args.target.from_protocol) check_distinct_files(args.junit_xml, "--junit-xml", args.target.target, "scenario file");
    check_distinct_files(args.junit_xml, "--junit-xml", args.trace_out, "--trace-out");
    check_parent_folders(args.junit_xml);
  }
  CheckRequest request;
  request.explore = explore_options(args);
  request.explore.before_recording = args.target.recording_check;
  request.trace_out = args.trace_out;
  request.iterations = args.target.iterations();
  request.separate_amax_comm = args.target.separate_amax_comm();
  if (args.backend == "gpu") {
    if (!args.junit_xml.empty()) throw InputError("--junit-xml: written for --backend sim only");
    return check_on_gpu(scenario, request, args.json);
  }
  if (args.backend != "sim") throw InputError(fmt::format("--backend: expected sim|gpu, got \"{}\"", args.backend));
  if (args.check_determinism) {
    const std::uint64_t runs = std::max<std::uint64_t>(1, std::min<std::uint64_t>(args.runs, 20));
    if (auto diff = sched::check_determinism(scenario, request.explore, runs)) throw InternalError(*diff);
    if (!args.json) fmt::print("determinism: runs replayed twice gave byte-identical traces\n");
  }
  const CheckOutcome outcome = run_check(scenario, request);
  if (!args.junit_xml.empty()) write_junit_file(args.junit_xml, junit_of(scenario, request, outcome));
  if (args.json) fmt::print("{}\n", to_json(scenario, args, outcome).dump(2));
  else print_human(scenario, args, request, outcome);
  return exit_code(outcome.result.verdict);
}

}  // namespace

void register_check(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  auto* sub = app.add_subcommand(
      "check", "explore a protocol or scenario file for hazards (exit 0 proven clean or no hazard found, 1 hazard, 2 bad "
               "input, 3 internal error, 4 inconclusive)");
  sub->footer(exit_codes_help);
  args->target.add_options(*sub);
  sub->add_option("--strategy", args->strategy, strategy_option_help())->capture_default_str();
  sub->add_option("--seed", args->seed, "exploration seed")->check(whole_number())->capture_default_str();
  sub->add_option("--runs", args->runs, "runs for random and pct")->check(whole_number())->capture_default_str();
  sub->add_option("--jobs", args->jobs, "worker threads for random and pct (results do not depend on it)")->capture_default_str();
  sub->add_flag("--keep-going", args->keep_going,
                "continue after the first failing run to collect every distinct hazard (a later run that first shows "
                "one gets its own trace, TRACE.runN.jsonl)");
  sub->add_option("--max-steps", args->max_steps,
                  "step cap of each run (0 = derived from the scenario: twice its op count's steps plus slack); a run "
                  "that reaches it makes the check inconclusive")
      ->check(whole_number());
  sub->add_option("--time-budget", args->time_budget_s,
                  "seconds for the whole check (0 = none); running out makes it inconclusive");
  sub->add_flag("--no-progress,--quiet", args->no_progress,
                "no progress lines on stderr (printed at most once a second once a check has run for a second)");
  sub->add_option("--trace-out", args->trace_out, "where to write the counterexample's trace");
  sub->add_flag("--json", args->json, "machine-readable output");
  sub->add_option("--junit-xml", args->junit_xml,
                  "also write a JUnit XML report (one testcase: failed by a hazard, an error when inconclusive; --backend sim)");
  sub->add_flag("--check-determinism", args->check_determinism, "run seeds twice and compare traces byte for byte");
  sub->add_option("--backend", args->backend, "sim | gpu (runs the schedule on real GPUs and compares)")->capture_default_str();
  sub->add_flag("--one-rank-comms", args->one_rank_comms,
                "cut every communicator into 1-rank communicators: the program a GPU run executes when two "
                "members of a communicator would share a GPU");
  add_strategy_options(*sub, args->strategy_args);
  add_command(app, sub, [args] { return run(*args); });
}

}  // namespace amaxcheck::cli
