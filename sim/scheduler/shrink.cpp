#include "scheduler/shrink.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "scheduler/replay_strategy.h"
#include "io/scenario_validate.h"
#include "scheduler/scenario_reduce.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

/// ddmin over `items`: the smallest subsequence (1-minimal, within the budget) that `keeps`.
template <class T>
std::vector<T> ddmin(std::vector<T> items, const std::function<bool(const std::vector<T>&)>& keeps,
                     const std::function<bool()>& budget_left) {
  std::size_t n = 2;
  while (items.size() >= 2 && budget_left()) {
    const std::size_t chunk = (items.size() + n - 1) / n;
    bool reduced = false;
    for (std::size_t start = 0; start < items.size() && budget_left(); start += chunk) {
      std::vector<T> complement(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(start));
      complement.insert(complement.end(), items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), start + chunk)),
                        items.end());
      if (keeps(complement)) {
        items = std::move(complement);
        n = std::max<std::size_t>(n - 1, 2);
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      if (n >= items.size()) break;
      n = std::min(n * 2, items.size());
    }
  }
  if (items.size() == 1 && budget_left() && keeps({})) items.clear();
  return items;
}

ShrinkSize size_of(const Scenario& scenario, const RunResult& run) {
  ShrinkSize size{scenario.ranks.size(), op_count(scenario), run.step_count, 0};
  for (const Choice& c : run.choices) size.deviations += c.chosen != 0 ? 1 : 0;
  return size;
}

class Shrinker {
 public:
  Shrinker(HazardKind target, const ShrinkOptions& options) : target_(target), options_(options) {
    quiet_ = options.run;
    quiet_.record_steps = false;
  }

  bool budget_left() const { return tests_ < options_.max_tests; }
  std::uint64_t tests() const { return tests_; }

  RunResult run(const Scenario& scenario, const std::vector<Choice>& choices, bool record) const {
    ReplayStrategy replay(choices, ReplayStrategy::Mode::lenient);
    RunOptions options = record ? options_.run : quiet_;
    options.record_steps = record;
    return run_once(scenario, replay, options);
  }

  bool reproduces(const Scenario& scenario, const std::vector<Choice>& choices) {
    ++tests_;
    // A reduced scenario must still be one a scenario file can hold (a dropped rank can leave an
    // empty communicator or a reduce-scatter sized for the old member count); otherwise the
    // shrunk trace could not be read back by `amaxcheck replay`.
    try {
      validate_scenario(scenario, "shrink candidate");
    } catch (const InputError&) {
      return false;
    }
    return run(scenario, choices, false).has_hazard(target_);
  }

 private:
  HazardKind target_;
  ShrinkOptions options_;
  RunOptions quiet_;
  std::uint64_t tests_ = 0;
};

}  // namespace

ShrinkResult shrink(const Scenario& scenario, const std::vector<Choice>& choices, HazardKind target,
                    const ShrinkOptions& options) {
  Shrinker shrinker(target, options);
  ShrinkResult result;
  const RunResult original = shrinker.run(scenario, choices, false);
  if (!original.has_hazard(target)) {
    throw InputError(fmt::format("shrink: the run does not show a {} hazard to keep", to_string(target)));
  }
  result.before = size_of(scenario, original);

  Scenario current = scenario;
  std::vector<Choice> current_choices = choices;
  auto budget = [&] { return shrinker.budget_left(); };
  bool changed = true;
  while (changed && budget()) {
    changed = false;
    for (RankId r = static_cast<RankId>(current.ranks.size()); r-- > 0 && budget();) {
      std::optional<Scenario> candidate = drop_rank(current, r);
      if (candidate && shrinker.reproduces(*candidate, current_choices)) {
        current = std::move(*candidate);
        changed = true;
      }
    }
    for (const std::string& group : origin_groups(current)) {
      if (!budget()) break;
      Scenario candidate = drop_origin_group(current, group);
      if (op_count(candidate) < op_count(current) && shrinker.reproduces(candidate, current_choices)) {
        current = std::move(candidate);
        changed = true;
      }
    }
    const std::vector<OpRef> ops = all_ops(current);
    const std::vector<OpRef> kept = ddmin<OpRef>(
        ops, [&](const std::vector<OpRef>& k) { return shrinker.reproduces(keep_ops(current, k), current_choices); },
        budget);
    if (kept.size() < ops.size()) {
      current = keep_ops(current, kept);
      changed = true;
    }
    const std::vector<Choice> fewer = ddmin<Choice>(
        current_choices, [&](const std::vector<Choice>& c) { return shrinker.reproduces(current, c); }, budget);
    if (fewer.size() < current_choices.size()) {
      current_choices = fewer;
      changed = true;
    }
  }

  result.run = shrinker.run(current, current_choices, true);
  AMAX_CHECK(result.run.has_hazard(target), "shrink: the shrunk run lost its hazard");
  result.scenario = std::move(current);
  result.after = size_of(result.scenario, result.run);
  result.tests = shrinker.tests();
  result.budget_exhausted = !shrinker.budget_left();
  return result;
}

}  // namespace amaxcheck::sched
