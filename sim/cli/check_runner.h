#pragma once
/// One check: explore a scenario under a strategy, write the counterexample's trace, and derive
/// the cost figures of timed runs. Shared by `check` and `demo`.

#include <optional>
#include <string>
#include <vector>

#include "cli/cost_metrics.h"
#include "scheduler/explore.h"
#include "trace/trace.h"

namespace amaxcheck::cli {

struct CheckRequest {
  sched::ExploreOptions explore;
  /// Where the counterexample's trace goes; empty = out/traces/<scenario>-<strategy>-seed<N>.jsonl.
  std::string trace_out;
  std::uint32_t iterations = 1;     ///< for per-iteration cost figures
  bool separate_amax_comm = false;  ///< for the communicator memory estimate
};

struct CheckOutcome {
  sched::ExploreResult result;
  std::string trace_path;  ///< written when a hazard was found; empty otherwise
  std::string replay;      ///< the command that replays the trace
  /// Per hazard of result.hazards, the command that replays a trace showing it: `replay`, or
  /// with --keep-going the trace of the later run that first showed it.
  std::vector<std::string> replays;
  std::optional<sched::Trace> trace;  ///< the counterexample, when a hazard was found
  double seconds = 0;
  std::optional<CostFigures> cost;  ///< timed runs
};

CheckOutcome run_check(const Scenario& scenario, const CheckRequest& request);

/// A file-name-safe form of `text` ("te-async --comm shared" -> "te-async_comm_shared").
std::string slug(const std::string& text);

}  // namespace amaxcheck::cli
