#include "scheduler/exhaustive_strategy.h"

#include <algorithm>

#include "scheduler/dependence.h"
#include "scheduler/explore.h"
#include "util/check.h"

namespace amaxcheck::sched {
ExhaustiveSearch::ExhaustiveSearch(ExhaustiveOptions options) : options_(options) {}

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
  for (const SleepEntry& entry : node.sleep) {
    if (entry.actor == node.actors[option]) return true;
  }
  return false;
}

bool ExhaustiveSearch::preempts(const Node& node, std::size_t option) const {
  if (!node.previous_actor || node.actors[option] == *node.previous_actor) return false;
  return std::find(node.actors.begin(), node.actors.end(), *node.previous_actor) != node.actors.end();
}

bool ExhaustiveSearch::over_bound(const Node& node, std::size_t option) const {
  if (!options_.preemption_bound) return false;
  return node.preemptions + (preempts(node, option) ? 1U : 0U) > *options_.preemption_bound;
}

std::vector<ExhaustiveSearch::SleepEntry> ExhaustiveSearch::child_sleep(
    const Node& parent, std::span<const std::uint64_t> enabled) const {
  const std::uint64_t actor = parent.actors[parent.chosen];
  const std::vector<Touch>& touches = parent.touches[parent.chosen];
  auto still_enabled = [&](std::uint64_t a) { return std::find(enabled.begin(), enabled.end(), a) != enabled.end(); };
  std::vector<SleepEntry> sleep;
  auto consider = [&](std::uint64_t a, const std::vector<Touch>& t) {
    if (a == actor || !still_enabled(a) || dependent(a, t, actor, touches)) return;
    sleep.push_back(SleepEntry{a, t});
  };
  for (const SleepEntry& entry : parent.sleep) consider(entry.actor, entry.touches);
  for (std::size_t i = 0; i < parent.options.size(); ++i) {
    if (parent.done[i] && i != parent.chosen && !asleep(parent, i)) consider(parent.actors[i], parent.touches[i]);
  }
  return sleep;
}

ExhaustiveSearch::Node ExhaustiveSearch::make_node(std::span<const Action> options) const {
  Node node;
  node.options.assign(options.begin(), options.end());
  node.actors.reserve(options.size());
  for (const Action& action : options) node.actors.push_back(actor_key(action));
  node.backtrack.assign(options.size(), 0);
  node.done.assign(options.size(), 0);
  node.touches.assign(options.size(), {});
  if (!stack_.empty()) {
    const Node& parent = stack_.back();
    node.previous_actor = parent.actors[parent.chosen];
    node.preemptions = parent.preemptions + (preempts(parent, parent.chosen) ? 1U : 0U);
    if (options_.reduction) node.sleep = child_sleep(parent, node.actors);
  }
  return node;
}

std::size_t ExhaustiveSearch::pick(ChoiceKind, std::span<const Action> options) {
  if (depth_ < stack_.size()) {
    const Node& node = stack_[depth_];
    AMAX_CHECK(std::equal(options.begin(), options.end(), node.options.begin(), node.options.end()),
               "exhaustive search: the enabled actions differ on replaying a prefix (the engine is not "
               "deterministic)");
    return node.chosen;
  }
  Node node = make_node(options);
  // Prefer continuing the previous actor (no preemption), then canonical order: a first pass
  // over the previous actor's options (the last of them first), then the others in order.
  std::optional<std::size_t> chosen;
  auto allowed = [&](std::size_t option) { return !(options_.reduction && asleep(node, option)) && !over_bound(node, option); };
  auto continues = [&](std::size_t i) { return node.previous_actor && node.actors[i] == *node.previous_actor; };
  for (std::size_t i = options.size(); i-- > 0 && !chosen;) {
    if (continues(i) && allowed(i)) chosen = i;
  }
  for (std::size_t i = 0; i < options.size() && !chosen; ++i) {
    if (!continues(i) && allowed(i)) chosen = i;
  }
  if (!chosen) {
    aborted_ = true;
    last_enabled_ = node.actors;
    for (std::size_t i = 0; i < options.size(); ++i) bound_abort_ = bound_abort_ || !(options_.reduction && asleep(node, i));
    if (bound_abort_) ++stats_.bound_skipped;
    return stop;
  }
  if (options_.reduction) {
    node.backtrack[*chosen] = 1;
  } else {
    std::fill(node.backtrack.begin(), node.backtrack.end(), 1);
  }
  node.chosen = *chosen;
  stack_.push_back(std::move(node));
  return *chosen;
}

void ExhaustiveSearch::on_step(const Step& step) {
  AMAX_CHECK(depth_ < stack_.size(), "exhaustive search: a step without a pick");
  Node& node = stack_[depth_];
  AMAX_CHECK(actor_key(step.action) == node.actors[node.chosen], "exhaustive search: the step is not the pick");
  node.touches[node.chosen] = step.touches;
  if (options_.mutant == ReductionMutant::reads_commute) std::erase_if(node.touches[node.chosen], [](const Touch& t) { return !t.write; });
  if (options_.mutant == ReductionMutant::ignore_disabling) {
    for (Touch& t : node.touches[node.chosen]) t.disables = false;
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
  std::vector<std::size_t>& races = races_;
  std::vector<std::uint32_t>& first_in_v = first_in_v_;
  std::vector<std::uint32_t>& initials = initials_;  // actor ids
  for (std::size_t j = clocks_.size(); j < stack_.size(); ++j) {
    const Node& at = stack_[j];
    races.clear();
    clocks_.push(at.actors[at.chosen], at.touches[at.chosen], races);
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
      Node& node = stack_[i];
      const std::uint32_t racing = clocks_.actor_of(j);
      bool covered = false;
      std::optional<std::size_t> candidate;
      for (std::size_t o = 0; o < node.options.size(); ++o) {
        const std::uint32_t a = clocks_.actor_id(node.actors[o]);
        if (std::find(initials.begin(), initials.end(), a) == initials.end()) continue;
        covered = covered || node.backtrack[o];
        // Prefer the racing actor itself (the plain reversal), else the first initial.
        if (!candidate || a == racing) candidate = o;
      }
      if (covered || !candidate) continue;  // already scheduled, or not reversible here
      node.backtrack[*candidate] = 1;
      ++stats_.races;
    }
  }
}

void ExhaustiveSearch::expand_where_a_step_disables_another() {
  for (std::size_t i = first_new_; i < stack_.size(); ++i) {
    Node& node = stack_[i];
    const std::vector<std::uint64_t>& after = i + 1 < stack_.size() ? stack_[i + 1].actors : last_enabled_;
    // A write that may disable another thread's synchronization matters here only when the run
    // got stuck: a synchronization that ran raced with it (path_clocks.h).
    const std::vector<Touch>& touches = node.touches[node.chosen];
    bool disables = stuck_ && std::any_of(touches.begin(), touches.end(), [](const Touch& t) { return t.write && t.disables; });
    for (std::size_t o = 0; o < node.options.size() && !disables; ++o) {
      disables = o != node.chosen && std::find(after.begin(), after.end(), node.actors[o]) == after.end();
    }
    if (disables && options_.mutant != ReductionMutant::ignore_disabling) std::fill(node.backtrack.begin(), node.backtrack.end(), 1);
  }
}

bool ExhaustiveSearch::advance_to_next_branch() {
  while (!stack_.empty()) {
    Node& node = stack_.back();
    node.done[node.chosen] = 1;
    for (std::size_t o = 0; o < node.options.size(); ++o) {
      if (!node.backtrack[o] || node.done[o]) continue;
      if (options_.reduction && asleep(node, o)) {
        node.done[o] = 1;  // covered by an exploration from an earlier state
        continue;
      }
      if (over_bound(node, o)) {
        node.done[o] = 1;
        ++stats_.bound_skipped;
        continue;
      }
      node.chosen = o;
      first_new_ = stack_.size() - 1;
      return true;
    }
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
  if (const std::int64_t bound = setup.integer("preemption-bound"); bound >= 0) {
    if (bound > UINT32_MAX) throw InputError(fmt::format("--preemption-bound: expected at most {}, got {}", UINT32_MAX, bound));
    options.preemption_bound = static_cast<std::uint32_t>(bound);
  }
  return std::make_unique<ExhaustiveSearch>(options);
}

}  // namespace amaxcheck::sched
