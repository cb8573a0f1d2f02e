#include "scheduler/run.h"

#include <algorithm>
#include <memory>
#include <set>
#include <span>

#include "detectors/detector.h"
#include "util/check.h"

namespace amaxcheck::sched {

const char* to_string(RunOutcome outcome) { return enum_name(outcome); }

bool parse_run_outcome(const std::string& text, RunOutcome& out) {
  const auto outcome = parse_enum<RunOutcome>(text);
  if (outcome) out = *outcome;
  return outcome.has_value();
}

bool RunResult::has_hazard(HazardKind kind) const {
  return std::any_of(hazards.begin(), hazards.end(), [&](const Hazard& h) { return h.kind == kind; });
}

RunResult run_once(const Scenario& scenario, Strategy& strategy, const RunOptions& options) {
  return Runner(scenario, options).run(strategy);
}

Runner::Runner(const Scenario& scenario, const RunOptions& options) : scenario_(scenario), options_(options) {}

RunResult Runner::run(Strategy& strategy) {
  const Scenario& scenario = scenario_;
  const RunOptions& options = options_;
  EngineOptions engine_options = options.engine;
  // A run that keeps no steps builds only what the strategy reads; observers see the same events.
  if (!options.record_steps) engine_options.step_detail = strategy.step_needs();
  if (engine_) {
    engine_->reset(engine_options);
  } else {
    engine_.emplace(scenario, engine_options);
  }
  Engine& engine = *engine_;
  // Detectors hold per-run findings: built by the first run, reset (keeping their memory) after.
  if (detectors_.empty()) {
    detectors_ = make_detectors(scenario, options.detectors);
  } else {
    for (auto& detector : detectors_) detector->reset();
  }
  const auto& detectors = detectors_;
  for (auto& detector : detectors) engine.add_observer(detector.get());
  strategy.attach(engine);

  // A strategy that reads no Step is sent none (Strategy::step_needs).
  const bool sends_steps = options.record_steps || engine_options.step_detail.any();
  // A run that keeps nothing of its steps (a random or PCT exploration's) lets the engine loop
  // over them, up to the next step where the cap or the deadline is looked at.
  const bool engine_loops = !sends_steps && !options.record_choices;
  // The derived cap is at least step_cap_slack, so it is only worked out (a pass over every
  // op) once a run gets that long: short runs never pay for it.
  std::size_t max_steps = options.max_steps > 0 ? options.max_steps : step_cap_slack;
  bool cap_known = options.max_steps > 0;
  // The clock is read once every this many steps: a run of a big scenario still ends soon
  // after its deadline.
  constexpr std::size_t clock_every_steps = 4096;
  // The step count at which the cap and the deadline are next looked at: a step before it
  // pays one comparison for both.
  std::size_t next_check = 0;
  RunResult result;
  // Runs of one scenario are about as long as each other: one allocation for the choices.
  if (options.record_choices) result.choices.reserve(last_step_count_);
  for (;;) {
    const std::vector<Action>& enabled = engine.enabled();
    if (enabled.empty()) {
      engine.finish();
      result.outcome = engine.done() ? RunOutcome::finished : RunOutcome::stuck;
      if (result.outcome == RunOutcome::stuck) result.stuck = engine.stuck();
      break;
    }
    if (result.step_count >= next_check) {
      const std::size_t count = result.step_count;
      if (count >= max_steps && !cap_known) {
        max_steps = step_cap(scenario);
        cap_known = true;
      }
      if (count >= max_steps) {
        result.outcome = RunOutcome::step_limit;
        break;
      }
      const bool clock_step = count % clock_every_steps == clock_every_steps - 1;
      if (options.deadline && clock_step && std::chrono::steady_clock::now() >= *options.deadline) {
        result.outcome = RunOutcome::time_limit;
        break;
      }
      next_check = max_steps;
      if (options.deadline) {
        const std::size_t next_clock_step = count - count % clock_every_steps + clock_every_steps - 1;
        next_check = std::min(next_check, clock_step ? count + clock_every_steps : next_clock_step);
      }
    }
    if (engine_loops) {
      const Engine::StepsTaken taken = engine.run_steps(strategy, next_check - result.step_count);
      result.step_count += taken.steps;
      if (taken.stopped) {
        result.outcome = RunOutcome::stopped;
        break;
      }
      continue;
    }
    const std::size_t chosen = strategy.pick(ChoiceKind::next_action, std::span<const Action>(enabled));
    if (chosen == Strategy::stop) {
      result.outcome = RunOutcome::stopped;
      break;
    }
    AMAX_CHECK(chosen < enabled.size(), "a strategy picked an option that does not exist");
    if (options.record_choices) result.choices.push_back(Choice{ChoiceKind::next_action, enabled.size(), chosen});
    if (options.record_steps) {
      Step step = engine.apply_enabled(chosen);
      strategy.on_step(step);
      result.steps.push_back(std::move(step));
    } else if (sends_steps) {
      strategy.on_step(engine.step_enabled(chosen));  // the engine's own Step: nothing built per step
    } else {
      engine.step_enabled(chosen);
    }
    ++result.step_count;
  }

  last_step_count_ = result.step_count;
  std::set<std::string> seen;
  for (const auto& detector : detectors) {
    for (const Hazard& hazard : detector->hazards()) {
      if (seen.insert(hazard.key()).second) result.hazards.push_back(hazard);
    }
  }
  return result;
}

std::uint64_t expected_steps(const Scenario& scenario) {
  std::uint64_t steps = 0;
  std::vector<std::uint64_t> collectives_per_comm(scenario.comms.size(), 0);
  for (RankId r = 0; r < scenario.ranks.size(); ++r) {
    std::vector<std::uint64_t> mine(scenario.comms.size(), 0);
    for (const Thread& thread : scenario.ranks[r].threads) {
      for (const Op& op : thread.program) {
        if (is_discarded_collective(op)) {
          steps += 1;  // its issue only
          continue;
        }
        steps += op_kind_info(op.kind).rank_actions;
        if (is_collective(op.kind) && op.comm < mine.size()) ++mine[op.comm];
      }
    }
    for (std::size_t c = 0; c < mine.size(); ++c) collectives_per_comm[c] = std::max(collectives_per_comm[c], mine[c]);
  }
  for (std::uint64_t n : collectives_per_comm) steps += n;
  return steps;
}

std::size_t step_cap(const Scenario& scenario) {
  return static_cast<std::size_t>(2 * expected_steps(scenario) + step_cap_slack);
}

std::size_t effective_step_cap(const Scenario& scenario, const RunOptions& options) {
  return options.max_steps > 0 ? options.max_steps : step_cap(scenario);
}

}  // namespace amaxcheck::sched
