#pragma once
/// The one choice interface of the scheduler.
///
/// Every nondeterministic decision of a run goes through `Strategy::pick(kind, options)`:
/// the engine lists the enabled actions in canonical order, the strategy returns the index of
/// the one to apply. Each decision is logged as a `Choice` carrying its kind and how many
/// options it had, so a replay can tell that it is still on the recorded path (loom's `Path`,
/// rapidcheck's reproduce). Strategies (random, pct, exhaustive, replay, timed) live in one
/// file each and know nothing about what an op means; the engine never chooses.

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

class Strategy {
 public:
  /// Returned by pick() to end the run early (e.g. an exhaustive search whose every
  /// continuation is equivalent to one already explored).
  static constexpr std::size_t stop = static_cast<std::size_t>(-1);

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
  /// Picks one of `options` (never empty), returning its index, or `stop`.
  virtual std::size_t pick(ChoiceKind kind, std::span<const Action> options) = 0;
  /// Sees the step that the last pick produced (exhaustive and timed need its effects).
  virtual void on_step(const Step& /*step*/) {}
  /// The parts of a Step that on_step reads, so runs that keep no steps can skip the rest.
  /// Index, action, op, collective, comm and seq are always filled. The default is everything.
  virtual StepDetail step_needs() const { return StepDetail{}; }
};

}  // namespace amaxcheck::sched
