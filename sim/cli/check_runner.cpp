#include "cli/check_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "trace/reproduce.h"
#include "util/atomic_file.h"
#include "util/check.h"

namespace amaxcheck::cli {

std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    if (keep) out += c;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "scenario" : out.substr(0, 120);
}

CheckOutcome run_check(const Scenario& scenario, const CheckRequest& request) {
  const std::string trace_path = request.trace_out.empty()
                                     ? fmt::format("out/traces/{}-{}-seed{}.jsonl", slug(scenario.name),
                                                   request.explore.strategy, request.explore.seed)
                                     : request.trace_out;
  // A path asked for is refused before the exploration, not after it found the hazard the
  // trace was for; the default one only when a trace is written (a clean check writes none).
  if (!request.trace_out.empty()) check_parent_folders(trace_path);
  CheckOutcome outcome;
  const auto start = std::chrono::steady_clock::now();
  outcome.result = sched::explore(scenario, request.explore);
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const sched::TimedRun* timing = outcome.result.timing ? &*outcome.result.timing : nullptr;
  // Cost figures only for a run that finished: the time up to a hang is no iteration time.
  if (timing && timing->finished) {
    outcome.cost = cost_figures(scenario, *timing, timing->cost, request.iterations, request.separate_amax_comm);
  }
  if (outcome.result.first_failure) {
    outcome.trace_path = trace_path;
    create_parent_folders(outcome.trace_path);
    outcome.trace = sched::failure_trace(scenario, request.explore, *outcome.result.first_failure, timing);
    sched::write_trace_file(outcome.trace_path, *outcome.trace);
    outcome.replay = sched::replay_command(outcome.trace_path);
  }
  // --keep-going: the hazards that the first failing run did not show, each replayed from the
  // trace of the run that first showed it, written beside the first ("x.jsonl": "x.run17.jsonl").
  std::map<std::uint64_t, std::string> replay_of_run;
  if (outcome.result.first_failure) replay_of_run[outcome.result.first_failure->index] = outcome.replay;
  for (sched::FailingRun& failing : outcome.result.later_failures) {
    sched::record_steps(scenario, request.explore, failing);
    const std::filesystem::path first(outcome.trace_path);
    const std::string path =
        (first.parent_path() / fmt::format("{}.run{}{}", first.stem().string(), failing.index, first.extension().string())).string();
    sched::write_trace_file(path, sched::failure_trace(scenario, request.explore, failing, timing));
    replay_of_run[failing.index] = sched::replay_command(path);
    failing.run = sched::RunResult{};  // its steps: one recorded run in memory at a time
  }
  for (const sched::FoundHazard& found : outcome.result.hazards) {
    const auto it = replay_of_run.find(found.first_run);
    AMAX_CHECK(it != replay_of_run.end(), fmt::format("no trace of run {}, the first to show a hazard", found.first_run));
    outcome.replays.push_back(it->second);
  }
  return outcome;
}

}  // namespace amaxcheck::cli
