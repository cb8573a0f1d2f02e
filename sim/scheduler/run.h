#pragma once
/// One run: a deterministic function of (scenario, strategy, options).
///
/// run_once builds an Engine for the scenario, attaches RunOptions::detectors, and loops:
/// enabled() -> strategy.pick() -> apply(), logging every choice (and, when asked, every
/// step). When nothing is enabled it calls engine.finish() so the detectors can report
/// deadlocks and value problems, then gathers the hazards, deduplicated by Hazard::key().
///
/// Two limits can cut a run short, and an exploration that meets either is inconclusive
/// (verdict.h): the step cap, derived from the scenario unless given, and a deadline (the
/// exploration's time budget), checked every few thousand steps so the clock costs nothing.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "detectors/detector.h"
#include "detectors/hazard.h"
#include "engine/engine.h"
#include "scheduler/strategy.h"

namespace amaxcheck::sched {

struct RunOptions {
  EngineOptions engine;
  /// A run stops (outcome step_limit) after this many steps; 0 means step_cap(scenario).
  /// Scenarios are finite and a finished run takes exactly expected_steps, so the derived cap
  /// is only met by an engine that loops; a cap given by hand can cut real runs short.
  std::size_t max_steps = 0;
  /// A run stops (outcome time_limit) at the first check of the clock past this point.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// Keep every Step in the result (traces, exports). Exploration turns it off for speed; the
  /// engine then builds only the parts of each Step the strategy reads (Strategy::step_needs)
  /// instead of engine.step_detail.
  bool record_steps = true;
  /// Keep every Choice in the result. An exploration turns it off for a strategy whose runs can
  /// be made again alike (Strategy::runs_again_alike): only a failing run's are needed.
  bool record_choices = true;
  /// The detectors attached to the run (src/detectors/detector.h); the factories must outlive it.
  std::span<const DetectorFactory> detectors = default_detectors();
};

enum class RunOutcome : std::uint8_t {
  finished,    ///< every program finished and every stream drained
  stuck,       ///< nothing enabled but work remains (the deadlock detector reports it)
  stopped,     ///< the strategy ended the run early (Strategy::stop)
  step_limit,  ///< RunOptions::max_steps reached
  time_limit,  ///< RunOptions::deadline passed (explorations drop such runs: never in a trace)
};

}  // namespace amaxcheck::sched

namespace amaxcheck {
template <>
struct EnumNames<sched::RunOutcome> {
  static constexpr std::array table{
      EnumName<sched::RunOutcome>{sched::RunOutcome::finished, "finished"},
      EnumName<sched::RunOutcome>{sched::RunOutcome::stuck, "stuck"},
      EnumName<sched::RunOutcome>{sched::RunOutcome::stopped, "stopped"},
      EnumName<sched::RunOutcome>{sched::RunOutcome::step_limit, "step_limit"},
      EnumName<sched::RunOutcome>{sched::RunOutcome::time_limit, "time_limit"}};
};
}  // namespace amaxcheck

namespace amaxcheck::sched {

/// The traces' "outcome" words: the enumerators' names.
const char* to_string(RunOutcome outcome);
bool parse_run_outcome(const std::string& text, RunOutcome& out);

struct RunResult {
  RunOutcome outcome = RunOutcome::finished;
  std::size_t step_count = 0;
  std::vector<Choice> choices;  ///< one per step when RunOptions::record_choices
  std::vector<Step> steps;      ///< one per step when RunOptions::record_steps
  std::vector<Hazard> hazards;  ///< distinct by Hazard::key(), in the detectors' order
  std::vector<Stuck> stuck;     ///< what was blocked when the run got stuck

  bool has_hazard() const { return !hazards.empty(); }
  bool has_hazard(HazardKind kind) const;
};

/// Runs `scenario` once under `strategy`.
RunResult run_once(const Scenario& scenario, Strategy& strategy, const RunOptions& options = {});

/// Runs of one scenario with one set of options, one after another, on one engine and one set
/// of detectors that are reset between runs instead of rebuilt (Engine::reset,
/// Detector::reset): an exploration of a small scenario
/// otherwise spends a good part of each run building and freeing the engine's state. Each
/// run() returns exactly what run_once would. One Runner per thread; it holds one engine's
/// memory for as long as it lives.
class Runner {
 public:
  Runner(const Scenario& scenario, const RunOptions& options);
  RunResult run(Strategy& strategy);

 private:
  const Scenario& scenario_;
  RunOptions options_;
  std::optional<Engine> engine_;  ///< built by the first run
  std::vector<std::unique_ptr<Detector>> detectors_;  ///< built by the first run, reset by the next
  std::size_t last_step_count_ = 0;  ///< the previous run's steps: the next one's reservation
};

/// The number of steps a run of `scenario` takes when it finishes: one issue per op, one
/// execute or join per device op, one complete per collective (PCT's k).
std::uint64_t expected_steps(const Scenario& scenario);

/// The step cap a run of `scenario` gets when none is given: twice expected_steps plus
/// step_cap_slack, so it scales with the scenario and no finished or stuck run can reach it.
std::size_t step_cap(const Scenario& scenario);
inline constexpr std::size_t step_cap_slack = 1024;
/// `options.max_steps`, or step_cap(scenario) when it is 0.
std::size_t effective_step_cap(const Scenario& scenario, const RunOptions& options);

}  // namespace amaxcheck::sched
