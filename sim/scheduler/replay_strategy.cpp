#include "scheduler/replay_strategy.h"

#include <fmt/format.h>

#include "util/check.h"

namespace amaxcheck::sched {

std::string describe_step(const Action& action, const OpRef& op, const std::string& op_name) {
  const char* lane = action.kind == ActionKind::issue      ? "thread"
                     : action.kind == ActionKind::complete ? "comm"
                                                           : "stream";
  if (action.kind == ActionKind::complete) {
    return fmt::format("complete comm {} (op {} of rank {} thread {}: {})", action.lane, op.index, op.rank, op.thread,
                       op_name);
  }
  return fmt::format("{} rank {} {} {} op {}.{} ({})", to_string(action.kind), action.rank, lane, action.lane,
                     op.thread, op.index, op_name);
}

std::string written_text(const std::vector<WrittenValues>& written) {
  std::string out;
  for (const WrittenValues& w : written) {
    out += fmt::format("r{} b{}[{}..{})=[{}];", w.rank, w.range.buffer, w.range.offset, w.range.offset + w.range.count,
                       fmt::join(w.values, ","));
  }
  return out;
}

ReplayStrategy::ReplayStrategy(std::vector<Choice> choices, Mode mode, std::vector<ExpectedStep> expected)
    : choices_(std::move(choices)), mode_(mode), expected_(std::move(expected)) {}

nlohmann::ordered_json ReplayStrategy::parameters() const {
  nlohmann::ordered_json params;
  params["mode"] = mode_ == Mode::strict ? "strict" : "lenient";
  params["choices"] = choices_.size();
  return params;
}

std::size_t ReplayStrategy::pick(ChoiceKind kind, std::span<const Action> options) {
  const std::size_t step = next_++;
  if (mode_ == Mode::lenient) {
    if (step >= choices_.size() || choices_[step].chosen >= options.size()) return 0;
    return choices_[step].chosen;
  }
  if (step >= choices_.size()) {
    throw ReplayDiverged(step, fmt::format("diverged at step {}: expected the end of the run, got {} enabled action(s)",
                                           step, options.size()));
  }
  const Choice& recorded = choices_[step];
  if (recorded.kind != kind || recorded.option_count != options.size()) {
    throw ReplayDiverged(
        step, fmt::format("diverged at step {}: expected a {} choice among {} option(s), got a {} choice among {}",
                          step, to_string(recorded.kind), recorded.option_count, to_string(kind), options.size()));
  }
  if (recorded.chosen >= options.size()) {
    throw ReplayDiverged(step, fmt::format("diverged at step {}: expected a choice below {}, got {}", step,
                                           options.size(), recorded.chosen));
  }
  return recorded.chosen;
}

StepDetail ReplayStrategy::step_needs() const {
  const bool checks = mode_ != Mode::lenient && !expected_.empty();
  return StepDetail{checks, checks, false};
}

void ReplayStrategy::on_step(const Step& step) {
  if (mode_ == Mode::lenient || expected_.empty()) return;
  const std::size_t index = next_step_++;
  AMAX_CHECK(index < expected_.size(), "replay: more steps than picks");
  const ExpectedStep& want = expected_[index];
  const std::string want_text = describe_step(want.action, want.op, want.op_name);
  const std::string got_text = describe_step(step.action, step.op, step.op_name);
  if (want.action != step.action || !(want.op == step.op) || want.op_name != step.op_name) {
    throw ReplayDiverged(index, fmt::format("diverged at step {}: expected {}, got {}", index, want_text, got_text));
  }
  if (want.collective != step.collective || (step.collective && (want.comm != step.comm || want.seq != step.seq))) {
    throw ReplayDiverged(
        index, fmt::format("diverged at step {}: expected {} as collective {} #{} on comm {}, got {} #{} on comm {}",
                           index, want_text, want.collective ? "yes" : "no", want.seq, want.comm,
                           step.collective ? "yes" : "no", step.seq, step.comm));
  }
  if (want.written) {
    const std::string got = written_text(step.written);
    if (*want.written != got) {
      throw ReplayDiverged(index, fmt::format("diverged at step {}: expected {} to write {}, got {}", index, want_text,
                                              *want.written, got));
    }
  }
}

void ReplayStrategy::check_ended() const {
  if (mode_ == Mode::lenient) return;
  if (next_ < choices_.size()) {
    throw ReplayDiverged(
        next_, fmt::format("diverged at step {}: expected a {} choice among {} option(s), got the end of the run",
                           next_, to_string(choices_[next_].kind), choices_[next_].option_count));
  }
}

}  // namespace amaxcheck::sched
