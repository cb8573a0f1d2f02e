#pragma once
/// replay(choices): follows a recorded choice sequence.
///
/// Strict mode (replaying a trace): every pick must meet a choice of the same kind with the
/// same number of options, and every applied step must match the recorded one (action, op,
/// communicator sequence, values written); otherwise it throws InputError
/// "diverged at step N: expected X, got Y". A run that goes on past the recording, or ends
/// before it, diverges too (the caller checks the end with `check_ended`).
///
/// Lenient mode (shrinking): a choice index out of range for the options, or a pick past the
/// end of the sequence, falls back to option 0 (the first enabled action), deterministically.

#include <optional>
#include <string>
#include <vector>

#include "scheduler/strategy.h"
#include "util/check.h"

namespace amaxcheck::sched {

/// What a replay expects of one step (from a trace line).
struct ExpectedStep {
  Action action;
  OpRef op;
  std::string op_name;
  bool collective = false;
  CommId comm = 0;
  std::uint64_t seq = 0;
  /// The written values as the trace prints them (compared textually so NaN equals NaN).
  std::optional<std::string> written;
};

/// A strict replay's "diverged at step N: expected X, got Y", with N for the caller (a trace
/// reader names the line step N was read from).
struct ReplayDiverged : InputError {
  ReplayDiverged(std::size_t at_step, const std::string& what) : InputError(what), step(at_step) {}
  std::size_t step;
};

/// "issue rank 0 thread 0 op 3 (copy_back)": how divergence messages name a step.
std::string describe_step(const Action& action, const OpRef& op, const std::string& op_name);
/// The textual form of Step::written that ExpectedStep::written is compared with.
std::string written_text(const std::vector<WrittenValues>& written);

class ReplayStrategy final : public Strategy {
 public:
  enum class Mode : std::uint8_t { strict, lenient };

  explicit ReplayStrategy(std::vector<Choice> choices, Mode mode = Mode::strict,
                          std::vector<ExpectedStep> expected = {});

  std::string name() const override { return "replay"; }
  nlohmann::ordered_json parameters() const override;
  std::size_t pick(ChoiceKind kind, std::span<const Action> options) override;
  void on_step(const Step& step) override;
  /// Strict replay of a trace compares op names and written values; lenient replay reads nothing.
  StepDetail step_needs() const override;

  /// Strict mode: throws "diverged at step N" when the run ended before the recording did.
  void check_ended() const;
  std::size_t position() const { return next_; }

 private:
  std::vector<Choice> choices_;
  Mode mode_;
  std::vector<ExpectedStep> expected_;
  std::size_t next_ = 0;       ///< next choice to use
  std::size_t next_step_ = 0;  ///< next expected step
};

}  // namespace amaxcheck::sched
