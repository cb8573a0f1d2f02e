#pragma once
/// Expectation suites: a list of cases, each a scenario checked under a strategy and budget,
/// with the verdict it is expected to reach. `amaxcheck suite FILE` runs one; the demo is one
/// (traces/suites/demo.json, built into the program). The format is in traces/suites/README.md,
/// in JSON or the same document in TOML:
///
///   {"suite": "seed designs", "description": "...",
///    "defaults": {"scenario": {"protocol": "te-async", "knobs": {"dp": 2}}, "strategy": "exhaustive"},
///    "cases": [{"name": "wait after copy", "scenario": {"knobs": {"wait": "after-copy"}},
///               "expect": {"verdict": "hazard", "kinds": ["data_race"]}}, ...]}
///
/// A case is its defaults with its own fields merged over them (JSON merge patch: objects merge,
/// anything else replaces). Its scenario is a protocol and its knobs (a scenario file's
/// protocol form, traces/SCENARIO.md) or `scenario_file`, a path relative to the suite file.
/// Everything is read and every scenario built before any case runs, so bad input (exit 2,
/// naming the file and the field) never leaves half a suite run behind. A case whose scenario
/// is estimated to need more than `--max-memory` is such bad input too, naming the case.

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/memory_limit.h"
#include "detectors/hazard.h"
#include "model/scenario.h"
#include "scheduler/explore.h"

namespace amaxcheck::cli {

/// What a case must come to.
struct Expectation {
  enum class Verdict { proven_clean, no_hazard_found, hazard };
  Verdict verdict = Verdict::proven_clean;
  std::set<HazardKind> kinds;     ///< hazard: every one of these kinds must be found
  std::string subject;            ///< hazard: some hazard of those kinds is about it (empty: any)
  std::vector<std::string> ops;   ///< hazard: each op takes part in some hazard of those kinds
};

/// "proven clean", "no hazard found", "HAZARD data_race, deadlock".
std::string describe(const Expectation& expect);
/// The same as JSON: {"verdict": "hazard", "kinds": [...], "subject": ..., "ops": [...]}.
nlohmann::ordered_json expectation_json(const Expectation& expect);

struct SuiteCase {
  std::string name;      ///< unique in its suite
  std::string why;       ///< optional: why the expectation holds (the design notes' reason)
  Scenario scenario;
  sched::ExploreOptions explore;  ///< one job: a suite runs its cases in parallel instead
  Expectation expect;
  std::string rerun;     ///< the `amaxcheck check ...` command that runs this case alone
};

struct Suite {
  std::string name;
  std::string description;
  std::string where;  ///< the file it came from, for messages
  std::vector<SuiteCase> cases;
};

/// Reads a suite document; `where` names it in errors, `base_dir` resolves scenario files.
/// Each case's scenario is held to `memory` as if `jobs` cases of its size ran at once (never
/// more than the suite has); a protocol case is estimated from its knobs before it is built,
/// then again once built.
Suite suite_from_json(const nlohmann::json& doc, const std::string& where, const std::string& base_dir,
                      const MemoryLimit& memory = {}, unsigned jobs = 1);
/// Reads and parses a suite file, TOML when its name ends in .toml (io/toml_file.h), else JSON;
/// InputError naming the file, line or field.
Suite load_suite_file(const std::string& path, const MemoryLimit& memory = {}, unsigned jobs = 1);

}  // namespace amaxcheck::cli
