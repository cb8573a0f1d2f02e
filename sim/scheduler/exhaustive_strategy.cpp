#include "scheduler/exhaustive_strategy.h"

#include <algorithm>

#include "scheduler/dependence.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

/// happens-before sets of a run's steps, as bitsets over step indices.
class HappensBefore {
 public:
  explicit HappensBefore(std::size_t steps) : words_((steps + 63) / 64), bits_(steps * words_, 0) {}
  bool get(std::size_t later, std::size_t earlier) const {
    return (bits_[later * words_ + earlier / 64] >> (earlier % 64)) & 1U;
  }
  /// later gains earlier and everything before earlier.
  void add(std::size_t later, std::size_t earlier) {
    bits_[later * words_ + earlier / 64] |= std::uint64_t{1} << (earlier % 64);
    for (std::size_t w = 0; w < words_; ++w) bits_[later * words_ + w] |= bits_[earlier * words_ + w];
  }

 private:
  std::size_t words_;
  std::vector<std::uint64_t> bits_;
};

}  // namespace

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
  // Prefer continuing the previous actor (no preemption), then canonical order.
  std::optional<std::size_t> chosen;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (node.previous_actor && node.actors[i] == *node.previous_actor) order.insert(order.begin(), i);
    else order.push_back(i);
  }
  for (const std::size_t option : order) {
    if (options_.reduction && asleep(node, option)) continue;
    if (over_bound(node, option)) continue;
    chosen = option;
    break;
  }
  if (!chosen) {
    aborted_ = true;
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
  ++depth_;
}

bool ExhaustiveSearch::begin_run() {
  if (finished_) return false;
  if (options_.max_schedules && stats_.explored >= *options_.max_schedules) {
    stats_.capped = true;
    finished_ = true;
    return false;
  }
  started_ = true;
  depth_ = 0;
  aborted_ = false;
  bound_abort_ = false;
  return true;
}

void ExhaustiveSearch::add_backtrack_points_for_races() {
  const std::size_t steps = stack_.size();
  HappensBefore hb(steps);
  auto actor_at = [&](std::size_t i) { return stack_[i].actors[stack_[i].chosen]; };
  auto touches_at = [&](std::size_t i) -> const std::vector<Touch>& { return stack_[i].touches[stack_[i].chosen]; };
  for (std::size_t j = 0; j < steps; ++j) {
    for (std::size_t i = j; i-- > 0;) {
      if (hb.get(j, i) || !dependent(actor_at(i), touches_at(i), actor_at(j), touches_at(j))) continue;
      hb.add(j, i);
      // i is an immediate dependent predecessor of j: a race when the actors differ and the
      // race is new in this run.
      if (j < first_new_ || actor_at(i) == actor_at(j)) continue;
      // v = notdep(i).j: the steps after i that do not happen after i, then j.
      std::vector<std::size_t> v;
      for (std::size_t k = i + 1; k < j; ++k) {
        if (!hb.get(k, i)) v.push_back(k);
      }
      v.push_back(j);
      std::vector<std::uint64_t> initials;
      for (std::size_t x = 0; x < v.size(); ++x) {
        bool has_predecessor = false;
        for (std::size_t y = 0; y < x && !has_predecessor; ++y) has_predecessor = hb.get(v[x], v[y]);
        if (!has_predecessor) initials.push_back(actor_at(v[x]));
      }
      Node& node = stack_[i];
      auto is_initial = [&](std::size_t o) {
        return std::find(initials.begin(), initials.end(), node.actors[o]) != initials.end();
      };
      bool covered = false;
      std::optional<std::size_t> candidate;
      for (std::size_t o = 0; o < node.options.size(); ++o) {
        if (!is_initial(o)) continue;
        covered = covered || node.backtrack[o];
        // Prefer the racing actor itself (the plain reversal), else the first initial.
        if (!candidate || node.actors[o] == actor_at(j)) candidate = o;
      }
      if (covered || !candidate) continue;  // already scheduled, or not reversible here
      node.backtrack[*candidate] = 1;
      ++stats_.races;
    }
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

void ExhaustiveSearch::end_run() {
  AMAX_CHECK(started_, "end_run without begin_run");
  AMAX_CHECK(depth_ == stack_.size(), "exhaustive search: the run ended between a pick and its step");
  if (!aborted_) ++stats_.explored;
  else if (!bound_abort_) ++stats_.sleep_blocked;
  if (options_.reduction) add_backtrack_points_for_races();
  started_ = false;
  if (!advance_to_next_branch()) {
    finished_ = true;
    stats_.complete = stats_.bound_skipped == 0;
  }
}

}  // namespace amaxcheck::sched
