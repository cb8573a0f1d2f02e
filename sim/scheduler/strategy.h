#pragma once
/// The one choice interface of the scheduler.
///
/// Every nondeterministic decision of a run goes through `Strategy::pick(kind, options)`:
/// the engine lists the enabled actions in canonical order, the strategy returns the index of
/// the one to apply. Each decision is logged as a `Choice` carrying its kind and how many
/// options it had, so a replay can tell that it is still on the recorded path (loom's `Path`,
/// rapidcheck's reproduce). Strategies (random, pct, exhaustive, replay, timed) live in one
/// file each and know nothing about what an op means; the engine never chooses.
///
/// An exploration (explore.h) drives a strategy through many runs with the per-run hooks, as
/// shuttle's `Scheduler::new_execution` does: `begin_run(index)` before each run (false: there
/// is none, the exploration is over), `end_run(result)` after it, and `report` once at the end,
/// where the strategy adds what it knows to the exploration's result.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "engine/action.h"
#include "engine/engine.h"

namespace amaxcheck::sched {

/// What a choice decides. Today every choice picks the next action; the kind is recorded so
/// that later kinds (e.g. a value choice) cannot be confused with it on replay.
enum class ChoiceKind : std::uint8_t { next_action };
}  // namespace amaxcheck::sched

namespace amaxcheck {
template <>
struct EnumNames<sched::ChoiceKind> {
  static constexpr std::array table{EnumName<sched::ChoiceKind>{sched::ChoiceKind::next_action, "next_action"}};
};
}  // namespace amaxcheck

namespace amaxcheck::sched {

struct RunResult;      // run.h
struct ExploreResult;  // explore.h

const char* to_string(ChoiceKind kind);
/// Parses to_string's output; returns false for an unknown name.
bool parse_choice_kind(const std::string& text, ChoiceKind& out);

/// One logged decision: `chosen` is an index into `option_count` options.
struct Choice {
  ChoiceKind kind = ChoiceKind::next_action;
  std::size_t option_count = 0;
  std::size_t chosen = 0;
  friend auto operator<=>(const Choice&, const Choice&) = default;
};

/// A strategy is the engine's ActionPicker in a run whose loop the engine runs
/// (Engine::run_steps): its pick_action is pick(next_action, ...), which a final strategy may
/// override to make one virtual call a step instead of two (random, pct).
class Strategy : public ActionPicker {
 public:
  virtual ~Strategy() = default;
  /// Called by run_once when the run's engine exists, before the first pick. A strategy that
  /// prices actions (timed) keeps it to ask what each enabled action would run
  /// (Engine::pending_op); choosing still goes through pick alone.
  virtual void attach(const Engine& /*engine*/) {}
  /// A stable name for traces and reports: "random", "pct", "exhaustive", "replay", "timed".
  virtual std::string name() const = 0;
  /// Every parameter the strategy derived from its seed and options (logged in trace headers
  /// before the run starts, so a reader can reproduce it).
  virtual nlohmann::ordered_json parameters() const { return nlohmann::ordered_json::object(); }
  /// Picks one of `options` (never empty), returning its index, or `stop` (ActionPicker::stop)
  /// to end the run early (e.g. an exhaustive search whose every continuation is equivalent to
  /// one already explored).
  virtual std::size_t pick(ChoiceKind kind, std::span<const Action> options) = 0;
  /// ActionPicker: pick(ChoiceKind::next_action, enabled).
  std::size_t pick_action(std::span<const Action> enabled) override { return pick(ChoiceKind::next_action, enabled); }
  /// Sees the step that the last pick produced (exhaustive and timed need its effects).
  virtual void on_step(const Step& /*step*/) {}
  /// The parts of a Step that on_step reads, so runs that keep no steps can skip the rest.
  /// The default is everything. A strategy that asks for nothing (StepDetail::any() false) is
  /// sent no on_step in such runs.
  virtual StepDetail step_needs() const { return StepDetail{}; }

  // The exploration hooks. A strategy whose runs are independent (the table's `independent`
  // column) is asked for any run index, in any order, on one of several instances (one per
  // worker); any other is asked 0, 1, 2, ... on one instance.

  /// Prepares run `index` of an exploration; false when there is no such run (the default: one
  /// run). Not called for a strategy used for a single run_once.
  virtual bool begin_run(std::uint64_t index) { return index == 0; }
  /// Sees the run that just ended. Not called for a run the time budget cut (it is dropped).
  virtual void end_run(const RunResult& /*run*/) {}
  /// The seed of the current run (the traces' "seed"); 0 for a strategy without one.
  virtual std::uint64_t seed() const { return 0; }
  /// Whether begin_run(i) always starts the same run i, whatever ran before (its choices follow
  /// from i): an exploration then records no run's choices, and makes the failing run it reports
  /// again instead (explore.cpp).
  virtual bool runs_again_alike() const { return false; }
  /// Adds what the strategy knows to the result of its exploration, once its runs are over
  /// (called on one instance; a strategy with independent runs must not depend on which):
  /// statistics, whether it covered every schedule, what cut it short, figures of its runs.
  virtual void report(ExploreResult& /*result*/) const {}
};

}  // namespace amaxcheck::sched
