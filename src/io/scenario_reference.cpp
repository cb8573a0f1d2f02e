// The sequential reference of an explicit program: the engine driven one blocking op at a time.
#include "io/scenario_reference.h"

#include <fmt/format.h>

#include "engine/engine.h"
#include "util/check.h"
#include "util/float_bits.h"

namespace amaxcheck {
namespace {

bool has_scale_update(const Scenario& s) {
  for (const Rank& rank : s.ranks) {
    for (const Thread& thread : rank.threads) {
      for (const Op& op : thread.program) {
        if (op.kind == OpKind::scale_update) return true;
      }
    }
  }
  return false;
}

/// Runs `engine` so that each thread waits for its last issued op (or group) to finish.
/// Returns an empty string when the run finished, else where it stopped.
std::string run_sequentially(Engine& engine, const Scenario& s) {
  std::vector<std::vector<std::uint32_t>> unfinished(s.ranks.size());  // ops issued, not yet done
  std::vector<std::vector<bool>> in_group(s.ranks.size());             // more of its group to issue
  for (RankId r = 0; r < s.ranks.size(); ++r) {
    unfinished[r].assign(s.ranks[r].threads.size(), 0);
    in_group[r].assign(s.ranks[r].threads.size(), false);
  }
  const auto may_issue = [&](const Action& a) { return unfinished[a.rank][a.lane] == 0 || in_group[a.rank][a.lane]; };
  while (true) {
    const std::vector<Action>& enabled = engine.enabled();
    const Action* pick = nullptr;
    for (const Action& a : enabled) {
      if (a.kind != ActionKind::issue) {
        pick = &a;
        break;
      }
    }
    for (std::size_t i = 0; pick == nullptr && i < enabled.size(); ++i) {
      if (may_issue(enabled[i])) pick = &enabled[i];
    }
    if (pick == nullptr) {
      if (engine.done()) return "";
      const std::vector<Stuck> stuck = engine.stuck();
      if (stuck.empty()) return "every thread waits for an op it issued";
      return fmt::format("rank {} {} waits for {}", stuck.front().rank, stuck.front().lane, stuck.front().waiting_for);
    }
    const Action action = *pick;
    std::vector<OpRef> finished;
    if (action.kind == ActionKind::complete) finished = engine.joined_members(action.lane);
    const Step step = engine.apply(action);
    if (action.kind == ActionKind::execute) finished.push_back(step.op);
    for (const OpRef& ref : finished) --unfinished[ref.rank][ref.thread];
    if (action.kind == ActionKind::issue) {
      const auto& program = s.ranks[step.op.rank].threads[step.op.thread].program;
      const Op& op = program[step.op.index];
      if (!completes_at_issue(op)) ++unfinished[step.op.rank][step.op.thread];
      const std::size_t next = step.op.index + 1;
      in_group[step.op.rank][step.op.thread] =
          op.group != 0 && next < program.size() && program[next].group == op.group && is_p2p(program[next].kind);
    }
  }
}

}  // namespace

void compute_reference_expectations(Scenario& scenario, const std::string& where) {
  std::size_t first = scenario.checks.size();
  for (std::size_t c = 0; c < scenario.checks.size() && first == scenario.checks.size(); ++c) {
    if (scenario.checks[c].expected_reference) first = c;
  }
  if (first == scenario.checks.size()) return;
  const auto fail = [&](std::size_t c, const std::string& why) {
    throw InputError(fmt::format("{}: checks[{}].expected: \"reference\" {}", where, c, why));
  };
  if (!has_scale_update(scenario)) {
    fail(first, "needs the standard delayed-scaling ops, and this program has no scale_update; expected the values "
                "themselves");
  }
  EngineOptions options;
  options.step_detail = {false, false, false};
  Engine engine(scenario, options);
  if (const std::string stopped = run_sequentially(engine, scenario); !stopped.empty()) {
    fail(first, fmt::format("has no answer: the program run one blocking op at a time does not finish ({}); "
                            "expected the values themselves, or a program that finishes",
                            stopped));
  }
  for (std::size_t c = 0; c < scenario.checks.size(); ++c) {
    ReplicaCheck& check = scenario.checks[c];
    if (!check.expected_reference) continue;
    const ReplicaCheck::Replica& base = check.replicas.front();
    const std::vector<float> values = engine.read(base.rank, base.range);
    for (const ReplicaCheck::Replica& replica : check.replicas) {
      if (!same_bits(engine.read(replica.rank, replica.range), values)) {
        fail(c, fmt::format("has no single answer: run one blocking op at a time, rank {} and rank {} already end "
                            "with different values; expected the values themselves, or replicas that agree",
                            base.rank, replica.rank));
      }
    }
    check.expected = values;
  }
}

}  // namespace amaxcheck
