#include "cli/check_runner.h"

#include <fmt/format.h>

#include <chrono>

#include "trace/reproduce.h"
#include "util/atomic_file.h"

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
  // Refused before the exploration, not after it found the hazard the trace was for.
  check_parent_folders(trace_path);
  CheckOutcome outcome;
  const auto start = std::chrono::steady_clock::now();
  outcome.result = sched::explore(scenario, request.explore);
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const sched::TimedRun* timing = outcome.result.timing ? &*outcome.result.timing : nullptr;
  if (timing) outcome.cost = cost_figures(scenario, *timing, timing->cost, request.iterations, request.separate_amax_comm);
  if (outcome.result.first_failure) {
    outcome.trace_path = trace_path;
    create_parent_folders(outcome.trace_path);
    outcome.trace = sched::failure_trace(scenario, request.explore, *outcome.result.first_failure, timing);
    sched::write_trace_file(outcome.trace_path, *outcome.trace);
    outcome.replay = sched::replay_command(outcome.trace_path);
  }
  return outcome;
}

}  // namespace amaxcheck::cli
