#pragma once
/// One scheduled run of a scenario, and what the property tests read from it.
///
/// The run goes through the scheduler's own run_once (engine + the four detectors) under the
/// strategy `amaxcheck check --strategy K --seed S --runs 1` would use, with every step
/// recorded and every written value kept. Replaying those writes over the initial buffers
/// gives the value of any buffer at any step, so each scale update can be checked against the
/// reference: what it read (row 0 = the reduced amax) and what it wrote.

#include <string>
#include <vector>

#include "generators.h"
#include "scheduler/run.h"
#include "sequential_reference.h"

namespace amaxcheck::props {

struct ObservedRun {
  Scenario scenario;
  sched::RunResult run;
  Schedule schedule;
  EngineOptions engine;
  std::string strategy_name;                     ///< Strategy::name() of the run
  nlohmann::ordered_json strategy_parameters;    ///< Strategy::parameters() of the run
  /// The scale updates the engine performed, keyed as expected_updates() keys them
  /// (Values::all only).
  UpdateLog updates;
  /// Final contents of every buffer: [rank][buffer] (Values::all only; empty otherwise).
  std::vector<std::vector<std::vector<float>>> final_buffers;

  bool has(HazardKind kind) const { return run.has_hazard(kind); }
  /// One line per hazard (kind, summary, participants), or "no hazards".
  std::string describe_hazards() const;
};

/// Whether steps keep every value they write (needed for `updates` and `final_buffers`), or
/// only as many as the engine options say (as `amaxcheck check` records them; far smaller
/// traces).
enum class Values : std::uint8_t { all, as_configured };

/// Runs `scenario` once under `schedule`.
ObservedRun observe(Scenario scenario, const Schedule& schedule, const EngineOptions& engine = {},
                    Values values = Values::all);
/// Builds the protocol scenario of `c` and runs it.
ObservedRun observe(const ProtocolCase& c, const EngineOptions& engine = {}, Values values = Values::all);

/// The strategy run 0 of `amaxcheck check ... --strategy K --seed S` uses on `scenario`.
std::unique_ptr<sched::Strategy> make_strategy(const Scenario& scenario, const Schedule& schedule);

}  // namespace amaxcheck::props
