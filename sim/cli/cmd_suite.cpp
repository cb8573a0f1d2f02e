// amaxcheck suite FILE: run an expectation suite (suite_file.h) and say which cases met their
// expected verdicts.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "cli/hazard_report.h"
#include "cli/junit_xml.h"
#include "cli/suite_command.h"
#include "cli/suite_runner.h"
#include "cli/verdict_report.h"
#include "util/atomic_file.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck::cli {
namespace {

std::vector<Hazard> hazards_of(const CheckOutcome& outcome) {
  std::vector<Hazard> hazards;
  for (const auto& found : outcome.result.hazards) hazards.push_back(found.hazard);
  return hazards;
}

std::string explored(const CheckOutcome& outcome) {
  const auto& r = outcome.result;
  const char* unit = r.coverage == sched::Coverage::exhaustive ? "schedule" : "run";
  return fmt::format("{} {}{}, {} steps", r.runs, unit, r.runs == 1 ? "" : "s", r.steps);
}

/// The command under a case's row: the replay of its counterexample, else the check itself.
std::string command_of(const SuiteCase& c, const CaseRun& run) {
  return run.outcome.replay.empty() ? c.rerun : run.outcome.replay;
}

struct Table {
  std::size_t name_w = 4, expected_w = 8;
  explicit Table(const Suite& suite) {
    for (const SuiteCase& c : suite.cases) {
      name_w = std::max(name_w, c.name.size());
      expected_w = std::max(expected_w, describe(c.expect).size());
    }
  }
  void header() const {
    fmt::print("{:<12} {:<{}}  {:<{}}  {:<40}  {:<28} {:>7}\n", "result", "case", name_w, "expected", expected_w, "got",
               "explored", "time");
  }
  void row(const SuiteCase& c, const CaseRun& run) const {
    fmt::print("{:<12} {:<{}}  {:<{}}  {:<40}  {:<28} {:>6.2f}s\n", status_label(run.judgement.status), c.name, name_w,
               describe(c.expect), expected_w, run.judgement.got, explored(run.outcome), run.outcome.seconds);
    if (run.judgement.status != CaseStatus::met) {
      fmt::print("{:12} why: {}\n", "", run.judgement.reason);
      if (!c.why.empty()) fmt::print("{:12} expected because: {}\n", "", c.why);
    }
    fmt::print("{:12} {}: {}\n", "", run.outcome.replay.empty() ? "rerun" : "replay", command_of(c, run));
  }
};

JunitSuite junit_of(const Suite& suite, const std::vector<CaseRun>& runs) {
  JunitSuite out;
  out.name = suite.name;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const SuiteCase& c = suite.cases[i];
    const CaseRun& run = runs[i];
    JunitCase jc;
    jc.classname = "amaxcheck.suite." + slug(suite.name);
    jc.name = c.name;
    jc.time_s = run.outcome.seconds;
    // What the case rests on, met or not: a case met by a few sampled runs must not read like one
    // met by a proof (the verdict notes say which, with the runs and what they covered).
    std::string notes;
    for (const std::string& line : verdict_notes(run.outcome.result, c.explore)) notes += line + "\n";
    jc.system_out = fmt::format("expected: {}\ngot: {} ({})\n{}\n{}{}", describe(c.expect), run.judgement.got,
                                explored(run.outcome), verdict_headline(run.outcome.result), notes, command_of(c, run));
    if (run.judgement.status != CaseStatus::met) {
      const bool inconclusive = run.judgement.status == CaseStatus::inconclusive;
      jc.outcome = inconclusive ? JunitCase::Outcome::error : JunitCase::Outcome::failure;
      jc.type = inconclusive ? "inconclusive" : "expectation";
      // The message is the hazard's summary when there is one (with what was expected).
      jc.message = run.judgement.reason;
      jc.text = fmt::format("expected: {}\ngot: {}\n{}\n{}", describe(c.expect), run.judgement.got, run.judgement.reason,
                            format_hazard_groups(hazards_of(run.outcome), run.outcome.replays));
    }
    out.cases.push_back(std::move(jc));
  }
  return out;
}

nlohmann::ordered_json case_json(const SuiteCase& c, const CaseRun& run) {
  const auto& r = run.outcome.result;
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["status"] = status_word(run.judgement.status);
  j["expected"] = expectation_json(c.expect);
  j["verdict"] = sched::to_string(r.verdict);
  j["got"] = run.judgement.got;
  j["reason"] = run.judgement.reason;
  j["strategy"] = c.explore.strategy;
  j["seed"] = c.explore.seed;
  j["runs"] = r.runs;
  j["steps"] = r.steps;
  j["complete"] = r.coverage_complete;
  j["cut_short"] = cut_short_json(r);
  j["seconds"] = run.outcome.seconds;
  j["trace"] = run.outcome.trace_path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(escape_invalid_utf8(run.outcome.trace_path));
  j["timeline"] = run.timeline.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(escape_invalid_utf8(run.timeline));
  j["replay"] = run.outcome.replay;
  j["rerun"] = c.rerun;
  j["hazards"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < r.hazards.size(); ++i) j["hazards"].push_back(hazard_json(r.hazards[i].hazard, run.outcome.replays[i]));
  j["groups"] = hazard_groups_json(hazards_of(run.outcome));
  return j;
}

void print_summary(const Suite& suite, const std::vector<CaseRun>& runs) {
  bool any_trace = false;
  for (const CaseRun& run : runs) any_trace |= !run.outcome.trace_path.empty();
  if (any_trace) {
    fmt::print("\ncounterexamples (replay with `amaxcheck replay TRACE`, open timelines in ui.perfetto.dev):\n");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].outcome.trace_path.empty()) continue;
      fmt::print("  {}\n    hazards:  {}\n    trace:    {}\n    timeline: {}\n", suite.cases[i].name,
                 hazard_tally(hazards_of(runs[i].outcome)), runs[i].outcome.trace_path, runs[i].timeline);
    }
  }
  std::vector<std::string> unmet, inconclusive;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].judgement.status == CaseStatus::unmet) unmet.push_back(suite.cases[i].name);
    if (runs[i].judgement.status == CaseStatus::inconclusive) inconclusive.push_back(suite.cases[i].name);
  }
  fmt::print("\n");
  if (unmet.empty() && inconclusive.empty()) {
    fmt::print("every case met its expectation ({} of {})\n", runs.size(), runs.size());
    return;
  }
  for (const std::string& name : unmet) fmt::print("did not meet its expectation: {}\n", name);
  for (const std::string& name : inconclusive) fmt::print("inconclusive within its budget: {}\n", name);
  fmt::print("{} of {} cases met their expectations\n", runs.size() - unmet.size() - inconclusive.size(), runs.size());
}

int exit_code_of(const std::vector<CaseRun>& runs) {
  const auto any = [&](CaseStatus s) {
    return std::any_of(runs.begin(), runs.end(), [&](const CaseRun& r) { return r.judgement.status == s; });
  };
  if (any(CaseStatus::unmet)) return exit_hazard;
  if (any(CaseStatus::inconclusive)) return exit_inconclusive;
  return exit_clean;
}

}  // namespace

int run_suite_command(const Suite& suite, const SuiteCommandOptions& options) {
  SuiteRunOptions run_options;
  run_options.jobs = std::max(1u, options.jobs);
  run_options.out_dir = options.out_dir.empty() ? "out/suites/" + slug(suite.name) : options.out_dir;
  // Refused before the cases run, not after.
  if (!options.junit_xml.empty()) check_parent_folders(options.junit_xml);
  std::error_code error;
  std::filesystem::create_directories(run_options.out_dir, error);
  if (error) throw InputError(fmt::format("--out {}: cannot create the folder: {}", run_options.out_dir, error.message()));
  const Table table(suite);
  if (!options.json) {
    fmt::print("suite \"{}\" ({}): {} case(s), {} job(s)\n", suite.name, suite.where, suite.cases.size(),
               run_options.jobs);
    if (!suite.description.empty()) fmt::print("{}\n", suite.description);
    fmt::print("\n");
    table.header();
  }
  const std::vector<CaseRun> runs = run_suite(suite, run_options, [&](std::size_t i, const CaseRun& run) {
    if (options.json) return;
    table.row(suite.cases[i], run);
    std::fflush(stdout);
  });
  if (!options.junit_xml.empty()) write_junit_file(options.junit_xml, junit_of(suite, runs));
  const int code = exit_code_of(runs);
  if (options.json) {
    nlohmann::ordered_json j;
    j["suite"] = suite.name;
    j["file"] = suite.where;
    j["exit_code"] = code;
    j["cases"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < runs.size(); ++i) j["cases"].push_back(case_json(suite.cases[i], runs[i]));
    fmt::print("{}\n", j.dump(2));
  } else {
    print_summary(suite, runs);
    if (!options.junit_xml.empty()) fmt::print("JUnit report: {}\n", options.junit_xml);
  }
  return code;
}

void register_suite(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto options = std::make_shared<SuiteCommandOptions>();
  auto memory = std::make_shared<MemoryLimit>();
  auto* sub = app.add_subcommand(
      "suite", "run an expectation suite: cases of scenario, strategy, budget and expected verdict (exit 0 every "
               "case met its expectation, 1 one did not, 2 bad input, 4 a case was inconclusive)");
  sub->footer(suite_exit_codes_help);
  sub->add_option("file", *file, "the suite file (JSON; format in traces/suites/README.md)")->required();
  sub->add_option("--jobs", options->jobs, "cases run at once (results do not depend on it)")->capture_default_str();
  sub->add_option("--out", options->out_dir, "folder for counterexample traces and timelines (default out/suites/<suite>)");
  sub->add_option("--junit-xml", options->junit_xml, "write a JUnit XML report (one testcase per case) to this path");
  sub->add_flag("--json", options->json, "machine-readable output");
  memory->add_option(*sub);  // per case, as if --jobs cases of its size ran at once
  add_command(app, sub, [file, options, memory] {
    return run_suite_command(load_suite_file(*file, *memory, options->jobs), *options);
  });
}

}  // namespace amaxcheck::cli
