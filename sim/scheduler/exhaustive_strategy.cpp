#include "scheduler/exhaustive_strategy.h"

#include <algorithm>

#include "scheduler/dependence.h"
#include "scheduler/explore.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {
/// Steps the search's lists are first sized for: one run's, within bounds (beyond, they grow).
std::size_t reserved_steps(std::uint64_t path_steps) {
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(path_steps, 8, 1024));
}
/// The search's first block: what its lists take for `steps` steps, reserved up front.
constexpr std::size_t block_bytes_per_step = 1024;
}  // namespace

ExhaustiveSearch::ExhaustiveSearch(ExhaustiveOptions options, std::uint64_t path_steps)
    : options_(options),
      block_(reserved_steps(path_steps) * block_bytes_per_step),
      memory_(block_.data(), block_.size()),
      stack_(&memory_),
      option_arena_(&memory_),
      sleep_arena_(&memory_),
      touch_arena_(&memory_),
      clocks_(&memory_),
      last_enabled_(&memory_),
      races_(&memory_),
      first_in_v_(&memory_),
      initials_(&memory_) {
  // About two options and four touches per step; per run, the last enabled set and a few races.
  const std::size_t steps = reserved_steps(path_steps);
  stack_.reserve(steps);
  option_arena_.reserve(2 * steps);
  sleep_arena_.reserve(steps);
  touch_arena_.reserve(4 * steps);
  clocks_.reserve(steps);
  last_enabled_.reserve(16);
  races_.reserve(16);
  first_in_v_.reserve(16);
  initials_.reserve(16);
}

nlohmann::ordered_json ExhaustiveSearch::parameters() const {
  nlohmann::ordered_json params;
  params["reduction"] = options_.reduction ? "source-dpor+sleep-sets" : "none";
  params["preemption_bound"] =
      options_.preemption_bound ? nlohmann::ordered_json(*options_.preemption_bound) : nlohmann::ordered_json();
  params["max_schedules"] =
      options_.max_schedules ? nlohmann::ordered_json(*options_.max_schedules) : nlohmann::ordered_json();
  return params;
}

bool ExhaustiveSearch::asleep(const Node& node, std::size_t option) const {
  const std::uint32_t actor = option_arena_[node.option_begin + option].actor;
  for (const SleepEntry& entry : sleep_of(node)) {
    if (entry.actor == actor) return true;
  }
  return false;
}

bool ExhaustiveSearch::preempts(const Node& node, std::size_t option) const {
  const std::span<const Option> opts = options_of(node);
  if (node.previous_actor < 0 || opts[option].actor == node.previous_actor) return false;
  return std::any_of(opts.begin(), opts.end(), [&](const Option& o) { return o.actor == node.previous_actor; });
}

bool ExhaustiveSearch::over_bound(const Node& node, std::size_t option) const {
  if (!options_.preemption_bound) return false;
  return node.preemptions + (preempts(node, option) ? 1U : 0U) > *options_.preemption_bound;
}

void ExhaustiveSearch::push_child_sleep(const Node& parent, std::span<const Option> enabled) {
  const std::span<const Option> opts = options_of(parent);
  const std::uint32_t actor = opts[parent.chosen].actor;
  const std::span<const Touch> chosen = touches(opts[parent.chosen].touches);
  auto still_enabled = [&](std::uint32_t a) {
    return std::any_of(enabled.begin(), enabled.end(), [&](const Option& o) { return o.actor == a; });
  };
  auto consider = [&](std::uint32_t a, TouchRange t) {
    if (a == actor || !still_enabled(a) || dependent(a, touches(t), actor, chosen)) return;
    sleep_arena_.push_back(SleepEntry{a, t});
  };
  // Indices, not references: push_back may move the arena.
  for (std::size_t e = parent.sleep_begin; e < parent.sleep_begin + parent.sleep_count; ++e) {
    consider(sleep_arena_[e].actor, sleep_arena_[e].touches);
  }
  for (std::size_t i = 0; i < opts.size(); ++i) {
    if (opts[i].done && i != parent.chosen && !asleep(parent, i)) consider(opts[i].actor, opts[i].touches);
  }
}

ExhaustiveSearch::Node ExhaustiveSearch::make_node(std::span<const Action> options) {
  Node node;
  node.option_begin = option_arena_.size();
  node.option_count = static_cast<std::uint32_t>(options.size());
  node.touch_begin = touch_arena_.size();
  for (const Action& action : options) option_arena_.push_back(Option{action, clocks_.actor_id(actor_key(action)), 0, 0, {}});
  node.sleep_begin = sleep_arena_.size();
  if (!stack_.empty()) {
    const Node& parent = stack_.back();
    node.previous_actor = chosen_actor(parent);
    node.preemptions = parent.preemptions + (preempts(parent, parent.chosen) ? 1U : 0U);
    if (options_.reduction) push_child_sleep(parent, options_of(node));
  }
  node.sleep_count = static_cast<std::uint32_t>(sleep_arena_.size() - node.sleep_begin);
  return node;
}

void ExhaustiveSearch::drop_arenas_of(const Node& node) {
  option_arena_.resize(node.option_begin);
  sleep_arena_.resize(node.sleep_begin);
  touch_arena_.resize(node.touch_begin);
}

std::size_t ExhaustiveSearch::pick(ChoiceKind, std::span<const Action> options) {
  if (depth_ < stack_.size()) {
    const std::span<const Option> opts = options_of(stack_[depth_]);
    AMAX_CHECK(std::equal(options.begin(), options.end(), opts.begin(), opts.end(),
                          [](const Action& a, const Option& o) { return a == o.action; }),
               "exhaustive search: the enabled actions differ on replaying a prefix (the engine is not "
               "deterministic)");
    return stack_[depth_].chosen;
  }
  Node node = make_node(options);
  const std::span<Option> opts = options_of(node);
  // Prefer continuing the previous actor (no preemption), then canonical order: a first pass
  // over the previous actor's options (the last of them first), then the others in order.
  std::optional<std::size_t> chosen;
  auto allowed = [&](std::size_t option) { return !(options_.reduction && asleep(node, option)) && !over_bound(node, option); };
  auto continues = [&](std::size_t i) { return opts[i].actor == node.previous_actor; };
  for (std::size_t i = options.size(); i-- > 0 && !chosen;) {
    if (continues(i) && allowed(i)) chosen = i;
  }
  for (std::size_t i = 0; i < options.size() && !chosen; ++i) {
    if (!continues(i) && allowed(i)) chosen = i;
  }
  if (!chosen) {
    aborted_ = true;
    last_enabled_.clear();
    for (const Option& o : opts) last_enabled_.push_back(o.actor);
    for (std::size_t i = 0; i < options.size(); ++i) bound_abort_ = bound_abort_ || !(options_.reduction && asleep(node, i));
    if (bound_abort_) ++stats_.bound_skipped;
    drop_arenas_of(node);
    return stop;
  }
  for (std::size_t i = 0; i < opts.size(); ++i) opts[i].backtrack = options_.reduction ? i == *chosen : 1;
  node.chosen = *chosen;
  stack_.push_back(node);
  return *chosen;
}

void ExhaustiveSearch::on_step(const Step& step) {
  AMAX_CHECK(depth_ < stack_.size(), "exhaustive search: a step without a pick");
  const Node& node = stack_[depth_];
  Option& option = option_arena_[node.option_begin + node.chosen];
  AMAX_CHECK(step.action == option.action, "exhaustive search: the step is not the pick");
  // A replayed prefix step was recorded by an earlier run; only new steps' touches are kept.
  if (depth_ >= first_new_) {
    AMAX_CHECK(depth_ + 1 == stack_.size(), "exhaustive search: a new step below the top of the path");
    option.touches.begin = touch_arena_.size();
    for (const Touch& t : step.touches) {
      if (options_.mutant == ReductionMutant::reads_commute && !t.write) continue;
      touch_arena_.push_back(t);
      if (options_.mutant == ReductionMutant::ignore_disabling) touch_arena_.back().disables = false;
    }
    option.touches.count = static_cast<std::uint32_t>(touch_arena_.size() - option.touches.begin);
  }
  ++depth_;
}

bool ExhaustiveSearch::begin_run(std::uint64_t /*index*/) {
  if (finished_) return false;
  if (options_.max_schedules && stats_.explored >= *options_.max_schedules) {
    stats_.capped = true;
    finished_ = true;
    return false;
  }
  started_ = true;
  depth_ = 0;
  aborted_ = false;
  last_enabled_.clear();
  bound_abort_ = false;
  return true;
}

void ExhaustiveSearch::add_backtrack_points_for_races() {
  // Steps before first_new_ are the previous run's and so are their races; only the new
  // steps' clocks and races are computed.
  clocks_.truncate(first_new_);
  std::pmr::vector<std::size_t>& races = races_;
  std::pmr::vector<std::uint32_t>& first_in_v = first_in_v_;
  std::pmr::vector<std::uint32_t>& initials = initials_;  // actor ids
  for (std::size_t j = clocks_.size(); j < stack_.size(); ++j) {
    const Option& at = option_arena_[stack_[j].option_begin + stack_[j].chosen];
    races.clear();
    clocks_.push(at.actor, touches(at.touches), races);
    for (const std::size_t i : races) {
      // v = notdep(i).j: the steps after i that do not happen after i, then j. Its initials are
      // the steps with no predecessor in v; per actor, the first step of v is enough to tell.
      first_in_v.assign(clocks_.actor_count(), 0);
      initials.clear();
      auto visit = [&](std::size_t k) {
        const std::uint32_t a = clocks_.actor_of(k);
        if (!clocks_.has_predecessor_in(k, first_in_v)) initials.push_back(a);
        if (first_in_v[a] == 0) first_in_v[a] = clocks_.count_of(k);
      };
      for (std::size_t k = i + 1; k < j; ++k) {
        if (!clocks_.happens_before(i, k)) visit(k);
      }
      visit(j);
      const std::span<Option> opts = options_of(stack_[i]);
      const std::uint32_t racing = clocks_.actor_of(j);
      bool covered = false;
      std::optional<std::size_t> candidate;
      for (std::size_t o = 0; o < opts.size(); ++o) {
        const std::uint32_t a = opts[o].actor;
        if (std::find(initials.begin(), initials.end(), a) == initials.end()) continue;
        covered = covered || opts[o].backtrack;
        // Prefer the racing actor itself (the plain reversal), else the first initial.
        if (!candidate || a == racing) candidate = o;
      }
      if (covered || !candidate) continue;  // already scheduled, or not reversible here
      opts[*candidate].backtrack = 1;
      ++stats_.races;
    }
  }
}

void ExhaustiveSearch::expand_where_a_step_disables_another() {
  for (std::size_t i = first_new_; i < stack_.size(); ++i) {
    const Node& node = stack_[i];
    const std::span<Option> opts = options_of(node);
    auto enabled_after = [&](std::uint32_t actor) {
      if (i + 1 == stack_.size()) return std::find(last_enabled_.begin(), last_enabled_.end(), actor) != last_enabled_.end();
      const std::span<const Option> after = options_of(stack_[i + 1]);
      return std::any_of(after.begin(), after.end(), [&](const Option& o) { return o.actor == actor; });
    };
    // A write that may disable another thread's synchronization matters here only when the run
    // got stuck: a synchronization that ran raced with it (path_clocks.h).
    const std::span<const Touch> chosen = touches(opts[node.chosen].touches);
    bool disables = stuck_ && std::any_of(chosen.begin(), chosen.end(), [](const Touch& t) { return t.write && t.disables; });
    for (std::size_t o = 0; o < opts.size() && !disables; ++o) disables = o != node.chosen && !enabled_after(opts[o].actor);
    if (disables && options_.mutant != ReductionMutant::ignore_disabling) {
      for (Option& o : opts) o.backtrack = 1;
    }
  }
}

bool ExhaustiveSearch::advance_to_next_branch() {
  while (!stack_.empty()) {
    Node& node = stack_.back();
    const std::span<Option> opts = options_of(node);
    opts[node.chosen].done = 1;
    for (std::size_t o = 0; o < opts.size(); ++o) {
      if (!opts[o].backtrack || opts[o].done) continue;
      if (options_.reduction && asleep(node, o)) {
        opts[o].done = 1;  // covered by an exploration from an earlier state
        continue;
      }
      if (over_bound(node, o)) {
        opts[o].done = 1;
        ++stats_.bound_skipped;
        continue;
      }
      node.chosen = o;
      first_new_ = stack_.size() - 1;
      return true;
    }
    drop_arenas_of(node);
    stack_.pop_back();
  }
  return false;
}

void ExhaustiveSearch::end_run(const RunResult& run) {
  stuck_ = run.outcome == RunOutcome::stuck;
  AMAX_CHECK(started_, "end_run without begin_run");
  AMAX_CHECK(depth_ == stack_.size(), "exhaustive search: the run ended between a pick and its step");
  if (!aborted_) ++stats_.explored;
  else if (!bound_abort_) ++stats_.sleep_blocked;
  if (options_.reduction) {
    add_backtrack_points_for_races();
    expand_where_a_step_disables_another();
  }
  started_ = false;
  if (!advance_to_next_branch()) {
    finished_ = true;
    stats_.complete = stats_.bound_skipped == 0;
  }
}

void ExhaustiveSearch::report(ExploreResult& result) const {
  result.exhaustive = stats_;
  result.exhaustive_options = options_;
  result.coverage_complete = stats_.complete;
  result.pruned = stats_.sleep_blocked + stats_.bound_skipped;
  result.cut_short.schedule_cap = stats_.capped;
  result.cut_short.schedule_cap_value = options_.max_schedules.value_or(0);
  result.cut_short.bound_skipped = stats_.bound_skipped;
  result.cut_short.preemption_bound = options_.preemption_bound.value_or(0);
}

namespace {
constexpr StrategyParam params[] = {
    {"max-schedules", ParamType::count, "0", "cap on schedules (0 = none)", "", false},
    {"preemption-bound", ParamType::integer, "-1", "preemption bound (-1 = none)", "", false},
    {"no-reduction", ParamType::flag, "false", "visit every interleaving (no partial-order reduction)"},
};
}  // namespace

std::span<const StrategyParam> exhaustive_params() { return params; }

std::unique_ptr<Strategy> make_exhaustive_search(const StrategySetup& setup) {
  ExhaustiveOptions options;
  options.reduction = !setup.flag("no-reduction");
  if (const std::uint64_t cap = setup.count("max-schedules"); cap > 0) options.max_schedules = cap;
  const std::int64_t bound = setup.integer("preemption-bound");
  if (bound < -1) throw InputError(fmt::format("--preemption-bound: expected -1 (none) or a bound from 0, got {}", bound));
  if (bound >= 0) {
    if (bound > UINT32_MAX) throw InputError(fmt::format("--preemption-bound: expected at most {}, got {}", UINT32_MAX, bound));
    options.preemption_bound = static_cast<std::uint32_t>(bound);
  }
  return std::make_unique<ExhaustiveSearch>(options, expected_steps(setup.scenario));
}

}  // namespace amaxcheck::sched
