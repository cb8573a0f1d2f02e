#include "shrink/shrink.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "io/scenario_validate.h"
#include "scheduler/replay_strategy.h"
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
  explicit Shrinker(const ShrinkOptions& options) : options_(options) {
    quiet_ = options.run;
    quiet_.record_steps = false;
  }

  bool budget_left() const { return tests_ < options_.max_tests; }
  std::uint64_t tests() const { return tests_; }

  /// Fixes the bug to keep: `identity`, and the hazard kinds a candidate may show.
  void keep(HazardIdentity identity, const RunResult& original) {
    identity_ = std::move(identity);
    for (const Hazard& h : original.hazards) allowed_kinds_.insert(h.kind);
    // Value hazards find their producers and values in the steps; only they pay for recording them.
    quiet_.engine.step_detail = StepDetail{false, false, false};
    quiet_ = identity_options(quiet_, identity_.kind);
  }

  RunResult run(const Scenario& scenario, const std::vector<Choice>& choices, bool record) const {
    ReplayStrategy replay(choices, ReplayStrategy::Mode::lenient);
    RunOptions recorded = options_.run;
    recorded.record_steps = true;
    return run_once(scenario, replay, record ? recorded : quiet_);
  }

  bool reproduces(const Reduced& candidate, const std::vector<Choice>& choices) {
    ++tests_;
    // A reduced scenario must still be one a scenario file can hold (a dropped rank can leave an
    // empty communicator or a reduce-scatter sized for the old member count); otherwise the
    // shrunk trace could not be read back by `amaxcheck replay`.
    try {
      validate_scenario(candidate.scenario, "shrink candidate");
    } catch (const InputError&) {
      return false;
    }
    const RunResult result = run(candidate.scenario, choices, false);
    // A smaller run that fails in some new way as well is a different failure (slippage).
    for (const Hazard& h : result.hazards) {
      if (!allowed_kinds_.contains(h.kind)) return false;
    }
    return same_bug(identity_, candidate.scenario, candidate.lineage, result);
  }

 private:
  ShrinkOptions options_;
  RunOptions quiet_;
  HazardIdentity identity_;
  std::set<HazardKind> allowed_kinds_;
  std::uint64_t tests_ = 0;
};

/// One pass of every reduction over `current`; whether any made it smaller.
bool reduce_once(Shrinker& shrinker, Reduced& current, std::vector<Choice>& choices) {
  auto budget = [&] { return shrinker.budget_left(); };
  bool changed = false;
  std::vector<std::size_t> checks(current.scenario.checks.size());
  for (std::size_t c = 0; c < checks.size(); ++c) checks[c] = c;
  const std::vector<std::size_t> kept_checks = ddmin<std::size_t>(
      checks, [&](const std::vector<std::size_t>& k) { return shrinker.reproduces(keep_checks(current, k), choices); },
      budget);
  if (kept_checks.size() < checks.size()) {
    current = keep_checks(current, kept_checks);
    changed = true;
  }
  for (RankId r = static_cast<RankId>(current.scenario.ranks.size()); r-- > 0 && budget();) {
    std::optional<Reduced> candidate = drop_rank(current, r);
    if (candidate && shrinker.reproduces(*candidate, choices)) {
      current = std::move(*candidate);
      changed = true;
    }
  }
  for (const std::string& group : origin_groups(current.scenario)) {
    if (!budget()) break;
    Reduced candidate = drop_origin_group(current, group);
    if (op_count(candidate.scenario) < op_count(current.scenario) && shrinker.reproduces(candidate, choices)) {
      current = std::move(candidate);
      changed = true;
    }
  }
  const std::vector<OpRef> ops = all_ops(current.scenario);
  const std::vector<OpRef> kept = ddmin<OpRef>(
      ops, [&](const std::vector<OpRef>& k) { return shrinker.reproduces(keep_ops(current, k), choices); }, budget);
  if (kept.size() < ops.size()) {
    current = keep_ops(current, kept);
    changed = true;
  }
  const std::vector<Choice> fewer = ddmin<Choice>(
      choices, [&](const std::vector<Choice>& c) { return shrinker.reproduces(current, c); }, budget);
  if (fewer.size() < choices.size()) {
    choices = fewer;
    changed = true;
  }
  return changed;
}

std::string show_op(const Scenario& s, const OpRef& ref) {
  const Op& op = s.ranks[ref.rank].threads[ref.thread].program[ref.index];
  return fmt::format("thread {} op #{} {}", s.ranks[ref.rank].threads[ref.thread].name, ref.index, op.name);
}

}  // namespace

ShrinkResult shrink(const Scenario& scenario, const std::vector<Choice>& choices, std::size_t target,
                    const ShrinkOptions& options) {
  Shrinker shrinker(options);
  Reduced current = unreduced(scenario);
  const RunResult first = shrinker.run(scenario, choices, false);
  if (target >= first.hazards.size()) {
    throw InputError(fmt::format("shrink: the run shows {} hazard(s), so it has no hazard #{} to keep",
                                 first.hazards.size(), target));
  }
  ReplayStrategy replay(choices, ReplayStrategy::Mode::lenient);
  const RunResult original = run_once(scenario, replay, identity_options(options.run, first.hazards[target].kind));
  ShrinkResult result;
  result.original = original.hazards[target];
  result.identity = identity_of(result.original, scenario, current.lineage, original);
  result.before = size_of(scenario, original);
  shrinker.keep(result.identity, original);

  std::vector<Choice> current_choices = choices;
  while (shrinker.budget_left() && reduce_once(shrinker, current, current_choices)) {
  }

  result.run = shrinker.run(current.scenario, current_choices, true);
  // The same schedule again, recording what the identity needs (the trace's run may keep fewer values).
  const RunResult check = shrinker.run(current.scenario, current_choices, false);
  const Hazard* kept = find_same_bug(result.identity, current.scenario, current.lineage, check);
  AMAX_CHECK(kept != nullptr, "shrink: the shrunk run lost its hazard");
  AMAX_CHECK(check.hazards.size() == result.run.hazards.size(), "shrink: the shrunk run is not deterministic");
  result.hazard = *kept;
  result.scenario = std::move(current.scenario);
  // A reduced program can have another sequential reference (io/scenario_reference.h): the
  // shrunk scenario states the values the original's checks were held to.
  for (ReplicaCheck& check : result.scenario.checks) check.expected_reference = false;
  result.lineage = std::move(current.lineage);
  result.after = size_of(result.scenario, result.run);
  result.tests = shrinker.tests();
  result.budget_exhausted = !shrinker.budget_left();
  return result;
}

ShrinkResult shrink(const Scenario& scenario, const std::vector<Choice>& choices, HazardKind target,
                    const ShrinkOptions& options) {
  ReplayStrategy replay(choices, ReplayStrategy::Mode::lenient);
  RunOptions quiet = options.run;
  quiet.record_steps = false;
  const RunResult original = run_once(scenario, replay, quiet);
  for (std::size_t i = 0; i < original.hazards.size(); ++i) {
    if (original.hazards[i].kind == target) return shrink(scenario, choices, i, options);
  }
  throw InputError(fmt::format("shrink: the run does not show a {} hazard to keep", to_string(target)));
}

std::vector<std::string> describe_lineage(const Scenario& shrunk, const Lineage& lineage, const Scenario& original) {
  std::vector<std::string> lines;
  for (RankId r = 0; r < shrunk.ranks.size(); ++r) {
    const RankId o = lineage.ranks[r];
    std::vector<std::string> buffers;
    for (const Buffer& b : shrunk.ranks[r].buffers) buffers.push_back(b.name);
    lines.push_back(fmt::format("rank {} = original rank {} ({}); its threads, streams, events and buffers keep their "
                                "names and indices ({} buffers: {})",
                                r, o, original.ranks[o].name, shrunk.ranks[r].buffers.size(),
                                fmt::join(buffers, ", ")));
    for (ThreadId t = 0; t < shrunk.ranks[r].threads.size(); ++t) {
      for (std::uint32_t i = 0; i < shrunk.ranks[r].threads[t].program.size(); ++i) {
        const OpRef back = lineage.original(OpRef{r, t, i});
        lines.push_back(fmt::format("  {} = original rank {} {} ({})", show_op(shrunk, OpRef{r, t, i}), back.rank,
                                    show_op(original, back), original.ranks[back.rank].threads[t].program[back.index].origin));
      }
    }
  }
  for (std::size_t c = 0; c < shrunk.checks.size(); ++c) {
    lines.push_back(fmt::format("check {} ({}) = original check {}", c, shrunk.checks[c].tensor, lineage.checks[c]));
  }
  if (shrunk.checks.empty() && !original.checks.empty()) {
    lines.push_back(fmt::format("the original's {} replica check(s) were dropped: the hazard is not about them", original.checks.size()));
  }
  return lines;
}

nlohmann::ordered_json lineage_json(const Scenario& shrunk, const Lineage& lineage) {
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (RankId r = 0; r < shrunk.ranks.size(); ++r) {
    nlohmann::ordered_json threads = nlohmann::ordered_json::array();
    for (ThreadId t = 0; t < shrunk.ranks[r].threads.size(); ++t) threads.push_back(lineage.ops[r][t]);
    ranks.push_back(nlohmann::ordered_json{{"original_rank", lineage.ranks[r]}, {"ops", threads}});
  }
  return nlohmann::ordered_json{{"ranks", ranks}, {"checks", lineage.checks}};
}

}  // namespace amaxcheck::sched
