// amaxcheck replay TRACE [--json] [--check-determinism]: re-runs a trace step by step.
// Exit 1 when the replayed run shows a hazard, 0 when it has none, 4 when it has none but the
// recorded run was cut at its step cap (inconclusive), 2 on a bad or diverging trace.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/memory_limit.h"
#include "cli/verdict_report.h"
#include "util/atomic_file.h"
#include "util/utf8.h"
#include "trace/reproduce.h"
#include "trace/trace.h"

namespace amaxcheck::cli {
namespace {

struct ReplayArgs {
  MemoryLimit memory;  ///< --max-memory
  std::string trace;
  bool json = false;
  bool check_determinism = false;
};

std::string participant_line(const Participant& p) {
  return fmt::format("    rank {} {}: {}{} (step {})", p.rank, p.lane, p.op_name,
                     p.origin.empty() ? "" : " [" + p.origin + "]", p.step);
}

/// Replays twice more and compares the regenerated traces with each other and the file.
std::string determinism_verdict(const sched::Trace& trace, const Scenario& scenario, const std::string& path,
                                bool& deterministic) {
  auto regenerate = [&] {
    const sched::RunResult run = sched::replay_trace(scenario, trace, path);
    sched::Trace again = sched::make_trace(
        scenario, run,
        sched::TraceOrigin{trace.header.strategy, trace.header.seed, trace.header.run_index, trace.header.parameters},
        sched::engine_options_from_json(trace.header.engine, path));
    again.header.tool_version = trace.header.tool_version;
    for (std::size_t i = 0; i < again.steps.size() && i < trace.steps.size(); ++i) again.steps[i].timing = trace.steps[i].timing;
    again.summary.makespan_us = trace.summary.makespan_us;
    again.summary.rank_end_us = trace.summary.rank_end_us;
    return sched::trace_to_jsonl(again);
  };
  const std::string first = regenerate();
  const std::string second = regenerate();
  const std::string file = read_file(path);
  deterministic = first == second && first == file;
  if (first != second) return "not deterministic: two replays wrote different traces";
  if (first != file) return "the replay is deterministic but differs from the file (written by another version?)";
  return "deterministic: two replays wrote traces byte-identical to the file";
}

int replay(const ReplayArgs& args) {
  const sched::Trace trace = sched::read_trace_file(args.trace);
  const Scenario scenario = sched::trace_scenario(trace, args.trace);
  args.memory.check_scenario(scenario, args.trace);
  const sched::RunResult run = sched::replay_trace(scenario, trace, args.trace);
  std::string determinism;
  bool deterministic = true;
  if (args.check_determinism) determinism = determinism_verdict(trace, scenario, args.trace, deterministic);
  const std::string command = sched::replay_command(args.trace);
  const bool cut = run.outcome == sched::RunOutcome::step_limit;
  const sched::VerdictKind verdict = !run.hazards.empty() ? sched::VerdictKind::hazard
                                     : cut                ? sched::VerdictKind::inconclusive
                                                          : sched::VerdictKind::no_hazard_found;
  if (args.json) {
    nlohmann::ordered_json out;
    out["trace"] = escape_invalid_utf8(args.trace);
    out["scenario"] = trace.header.scenario_name;
    out["strategy"] = trace.header.strategy;
    out["seed"] = trace.header.seed;
    out["steps"] = run.step_count;
    out["outcome"] = sched::to_string(run.outcome);
    out["verdict"] = sched::to_string(verdict);
    nlohmann::ordered_json hazards = nlohmann::ordered_json::array();
    for (const Hazard& h : run.hazards) {
      nlohmann::ordered_json participants = nlohmann::ordered_json::array();
      for (const Participant& p : h.participants) {
        participants.push_back({{"rank", p.rank}, {"lane", p.lane}, {"op_name", p.op_name}, {"origin", p.origin}, {"step", p.step}});
      }
      hazards.push_back({{"kind", to_string(h.kind)}, {"subject", h.subject}, {"summary", h.summary}, {"participants", participants},
                         {"details", h.details}, {"replay", command}});
    }
    out["hazards"] = hazards;
    if (args.check_determinism) out["deterministic"] = deterministic;
    out["replay"] = command;
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("replayed {}: scenario {}, {} seed {}, {} steps, {}; every step matched\n", args.trace,
               trace.header.scenario_name, trace.header.strategy, trace.header.seed, run.step_count,
               sched::to_string(run.outcome));
    for (const Hazard& h : run.hazards) {
      fmt::print("  {}: {}\n", to_string(h.kind), h.summary);
      for (const Participant& p : h.participants) fmt::print("{}\n", participant_line(p));
      for (const std::string& d : h.details) fmt::print("    {}\n", d);
      fmt::print("  reproduce: {}\n", command);
    }
    if (run.hazards.empty()) {
      fmt::print("{}\n", cut ? fmt::format("inconclusive: no hazard before the step cap cut the recorded run at {} steps",
                                            run.step_count)
                              : std::string("no hazard"));
    }
    if (args.check_determinism) fmt::print("{}\n", determinism);
  }
  if (!deterministic) return exit_bad_input;
  return exit_code(verdict);
}

}  // namespace

void register_replay(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* sub = app.add_subcommand("replay", "Replay a trace step by step and report its hazards");
  sub->add_option("trace", args->trace, "trace file (JSON Lines, see traces/FORMAT.md)")->required();
  args->memory.add_option(*sub);
  sub->add_flag("--json", args->json, "print the result as JSON");
  sub->add_flag("--check-determinism", args->check_determinism,
                "replay twice and compare the regenerated traces with the file byte for byte");
  add_command(app, sub, [args] { return replay(*args); });
}

}  // namespace amaxcheck::cli
