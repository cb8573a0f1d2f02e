#pragma once
/// One run: a deterministic function of (scenario, strategy, options).
///
/// run_once builds an Engine for the scenario, attaches the four detectors, and loops:
/// enabled() -> strategy.pick() -> apply(), logging every choice (and, when asked, every
/// step). When nothing is enabled it calls engine.finish() so the detectors can report
/// deadlocks and value problems, then gathers the hazards, deduplicated by Hazard::key().

#include <cstddef>
#include <cstdint>
#include <vector>

#include "detectors/hazard.h"
#include "engine/engine.h"
#include "scheduler/strategy.h"

namespace amaxcheck::sched {

struct RunOptions {
  EngineOptions engine;
  /// A run stops (outcome step_limit) after this many steps; scenarios are finite, so this
  /// only guards against engine bugs.
  std::size_t max_steps = 1'000'000;
  /// Keep every Step in the result (traces, exports). Exploration turns it off for speed; the
  /// engine then builds only the parts of each Step the strategy reads (Strategy::step_needs)
  /// instead of engine.step_detail.
  bool record_steps = true;
};

enum class RunOutcome : std::uint8_t {
  finished,    ///< every program finished and every stream drained
  stuck,       ///< nothing enabled but work remains (the deadlock detector reports it)
  stopped,     ///< the strategy ended the run early (Strategy::stop)
  step_limit,  ///< RunOptions::max_steps reached
};

const char* to_string(RunOutcome outcome);
bool parse_run_outcome(const std::string& text, RunOutcome& out);

struct RunResult {
  RunOutcome outcome = RunOutcome::finished;
  std::size_t step_count = 0;
  std::vector<Choice> choices;  ///< one per step, always recorded
  std::vector<Step> steps;      ///< one per step when RunOptions::record_steps
  std::vector<Hazard> hazards;  ///< distinct by Hazard::key(), in the detectors' order
  std::vector<Stuck> stuck;     ///< what was blocked when the run got stuck

  bool has_hazard() const { return !hazards.empty(); }
  bool has_hazard(HazardKind kind) const;
};

/// Runs `scenario` once under `strategy`.
RunResult run_once(const Scenario& scenario, Strategy& strategy, const RunOptions& options = {});

/// The number of steps a run of `scenario` takes when it finishes: one issue per op, one
/// execute or join per device op, one complete per collective (PCT's k).
std::uint64_t expected_steps(const Scenario& scenario);

}  // namespace amaxcheck::sched
