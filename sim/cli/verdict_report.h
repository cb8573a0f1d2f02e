#pragma once
/// The words of a verdict (scheduler/verdict.h), for people and machines, shared by `check`
/// and `demo`: what a proof covered, what a sample was, and what cut a search short with the
/// option that goes further. Exit codes follow the verdict.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scheduler/explore.h"

namespace amaxcheck::cli {

/// "HAZARD (2 distinct: data_race, deadlock)", "proven clean", "no hazard found", "inconclusive".
std::string verdict_headline(const sched::ExploreResult& result);

/// What the verdict rests on, one line each, without a trailing newline:
/// - proven clean: "proven: every schedule of the scenario as given, up to equivalence ..."
/// - no hazard found: "sampled: 200 random run(s), not a proof; --strategy exhaustive proves"
/// - inconclusive (and a hazard found while something was cut): "cut short: ... (raise it
///   with --max-steps)", one per cause.
std::vector<std::string> verdict_notes(const sched::ExploreResult& result, const sched::ExploreOptions& options);

/// [{"cause": "step_cap", "limit": N, "runs": K, "raise_with": "--max-steps"}, ...]; empty
/// when nothing cut the exploration short.
nlohmann::ordered_json cut_short_json(const sched::ExploreResult& result);

/// 0 proven clean or no hazard found, 1 hazard, 4 inconclusive.
int exit_code(sched::VerdictKind verdict);

/// A progress callback that prints "progress: N runs (of M), R/s, S s elapsed" to stderr;
/// `unit` is "runs" or "schedules".
sched::ProgressFn stderr_progress(std::string unit);

}  // namespace amaxcheck::cli
