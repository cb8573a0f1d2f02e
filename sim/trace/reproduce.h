#pragma once
/// Reproduction: from a run to a trace file, and from a trace file back to the run.
///
/// - failure_trace: the trace of an exploration's first failing run, with the seed and every
///   parameter that produced it (write it with write_trace_file);
/// - trace_scenario: the scenario a trace ran (its embedded copy), checked against the hash;
/// - replay_trace: re-runs a trace step by step; any difference stops it with an InputError
///   "TRACE: diverged at step N: expected X, got Y" (exit 2);
/// - check_determinism: runs an exploration's first runs twice and compares the traces byte
///   for byte;
/// - replay_command: the one line every hazard report ends with.

#include <optional>
#include <string>

#include "scheduler/explore.h"
#include "trace/trace.h"

namespace amaxcheck::sched {

/// The trace of `failure`, a run of `scenario` found by explore(..., options).
Trace failure_trace(const Scenario& scenario, const ExploreOptions& options, const FailingRun& failure,
                    const TimedRun* timing = nullptr);

/// The scenario embedded in `trace`, verified against its hash. `where` names the trace.
Scenario trace_scenario(const Trace& trace, const std::string& where);

/// Replays `trace` on `scenario` (which must hash to the trace's scenario_hash), checking
/// every choice and step. Returns the replayed run, steps recorded.
RunResult replay_trace(const Scenario& scenario, const Trace& trace, const std::string& where);

/// Runs the first `runs` runs of an exploration of `scenario` twice, on two instances of its
/// strategy driven through the same hooks as explore() (so a search's runs too), and compares
/// each run's two traces; returns "run N is not deterministic: ..." for the first difference,
/// or nothing when every pair is byte-identical.
std::optional<std::string> check_determinism(const Scenario& scenario, const ExploreOptions& options,
                                             std::uint64_t runs);

/// "amaxcheck replay PATH": the command that reproduces a trace.
std::string replay_command(const std::string& trace_path);

}  // namespace amaxcheck::sched
