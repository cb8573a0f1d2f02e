#include "scheduler/pct_strategy.h"

#include <algorithm>

#include "engine/engine.h"
#include "scheduler/run.h"
#include "util/check.h"

namespace amaxcheck::sched {

PctStrategy::PctStrategy(const PctOptions& options) : options_(options), prng_(options.seed) {
  AMAX_CHECK(options.depth >= 1, "PCT depth must be at least 1");
  start(options.seed);
}

PctStrategy::PctStrategy(const PctOptions& options, const SampledRuns& runs) : PctStrategy(options) { runs_ = runs; }

bool PctStrategy::begin_run(std::uint64_t index) {
  if (!runs_) return index == 0;
  const std::optional<std::uint64_t> seed = runs_->run_seed(index);
  if (!seed) return false;
  start(*seed);
  return true;
}

void PctStrategy::start(std::uint64_t seed) {
  options_.seed = seed;
  prng_ = Prng(seed);
  change_points_.clear();
  next_change_ = 0;
  step_ = 0;
  priorities_.clear();
  std::fill(slots_.begin(), slots_.end(), 0);
  std::fill(dense_priority_.begin(), dense_priority_.end(), 0);
  const std::uint64_t k = std::max<std::uint64_t>(options_.expected_steps, 1);
  const std::uint64_t wanted = std::min<std::uint64_t>(options_.depth - 1, k);
  // Distinct change points, drawn by rejection (d is small, so this ends quickly).
  while (change_points_.size() < wanted) {
    const std::uint64_t point = prng_.below(k);
    if (std::find(change_points_.begin(), change_points_.end(), point) == change_points_.end()) {
      change_points_.push_back(point);
    }
  }
  std::sort(change_points_.begin(), change_points_.end());
}

nlohmann::ordered_json PctStrategy::parameters() const {
  nlohmann::ordered_json params;
  params["seed"] = options_.seed;
  params["depth"] = options_.depth;
  params["expected_steps"] = options_.expected_steps;
  params["change_points"] = change_points_;
  return params;
}

/// The slot where `actor` is, or the empty one where it would go (linear probing from its hash).
std::size_t PctStrategy::slot_of(std::uint64_t actor) const {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = static_cast<std::size_t>((actor * 0x9E3779B97F4A7C15ull) >> 32) & mask;
  while (slots_[i] != 0 && priorities_[slots_[i] - 1].first != actor) i = (i + 1) & mask;
  return i;
}

void PctStrategy::grow_slots() {
  slots_.assign(std::max<std::size_t>(64, 2 * slots_.size()), 0);
  for (std::size_t n = 0; n < priorities_.size(); ++n) slots_[slot_of(priorities_[n].first)] = static_cast<std::uint32_t>(n + 1);
}

void PctStrategy::attach(const Engine& engine) {
  // Laid out again at every attach (a pass over the ranks, once a run): a scenario at the
  // address of an earlier one need not have its shape. The table is kept when the layout is.
  // Compared with the last layout as it is written over, without a copy of it (a run's attach
  // allocates nothing when the layout is kept).
  const Scenario& s = engine.scenario();
  std::uint32_t comm_base = 0;
  for (const Rank& rank : s.ranks) comm_base += static_cast<std::uint32_t>(rank.threads.size() + rank.streams.size());
  bool same_layout = layout_of_ != nullptr && kind_base_.size() == s.ranks.size();
  kind_base_.resize(s.ranks.size());
  std::uint32_t next = 0;
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const auto threads = static_cast<std::uint32_t>(s.ranks[r].threads.size());
    static_assert(static_cast<int>(ActionKind::issue) == 0 && static_cast<int>(ActionKind::execute) == 1 &&
                  static_cast<int>(ActionKind::join) == 2 && static_cast<int>(ActionKind::complete) == 3);
    const KindBases bases{next, next + threads, next + threads, comm_base};
    same_layout = same_layout && kind_base_[r] == bases;
    kind_base_[r] = bases;
    next += threads + static_cast<std::uint32_t>(s.ranks[r].streams.size());
  }
  const std::size_t table_size = comm_base + s.comms.size();
  if (!same_layout || dense_priority_.size() != table_size) dense_priority_.assign(table_size, 0);
  layout_of_ = &s;
  // Priorities live until start() forgets them, in the table as they did in the hash table; a
  // run that picked unattached first would have its priorities there instead.
  AMAX_CHECK(priorities_.empty(), "PCT: attach() after picks made unattached in the same run");
}

// dense_index, dense_priority and highest are declared inline: every step asks them for each
// enabled action, and as calls (which the compiler kept them as) they were a fifth of a PCT
// pick's cost (issue 19).
inline std::size_t PctStrategy::dense_index(const Action& action) const {
  return kind_base_[action.rank][static_cast<std::size_t>(action.kind)] + action.lane;
}

std::uint64_t PctStrategy::draw_priority() {
  // Initial priorities lie above every change-point priority (1..d-1). A random 62-bit value
  // gives a uniformly random order of the actors seen so far; ties are broken canonically.
  return options_.depth + prng_.below(std::uint64_t{1} << 62);
}

inline std::uint64_t PctStrategy::dense_priority(const Action& action) {
  std::uint64_t& priority = dense_priority_[dense_index(action)];
  if (priority == 0) priority = draw_priority();
  return priority;
}

void PctStrategy::lower(const Action& action, std::uint64_t priority) {
  if (layout_of_) {
    dense_priority_[dense_index(action)] = priority;
  } else {
    priorities_[slots_[slot_of(actor_key(action))] - 1].second = priority;
  }
}

std::uint64_t PctStrategy::priority_by_key(std::uint64_t actor) {
  if (slots_.empty()) grow_slots();
  const std::size_t slot = slot_of(actor);
  if (slots_[slot] != 0) return priorities_[slots_[slot] - 1].second;
  const std::uint64_t priority = draw_priority();
  priorities_.emplace_back(actor, priority);
  slots_[slot] = static_cast<std::uint32_t>(priorities_.size());
  if (2 * priorities_.size() > slots_.size()) grow_slots();
  return priority;
}

namespace {

/// The option of highest priority, the earliest of equals. Priorities are asked in option order,
/// which is the order a new actor's priority is drawn in.
template <class PriorityOf>
[[gnu::always_inline]] inline std::size_t highest_by(std::span<const Action> options, PriorityOf priority_of) {
  // Every priority is at least 1 (change points lower to 1..d-1, drawn ones lie above d - 1), so
  // the first option beats the 0 it starts from, and a tie keeps the earlier option.
  std::size_t best = 0;
  std::uint64_t best_priority = 0;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::uint64_t priority = priority_of(options[i]);
    // Selects, not a branch: which option is best so far follows the random priorities, so a
    // branch on it was mispredicted often; gcc compiles these to conditional moves (issue 19).
    const bool better = priority > best_priority;
    best = better ? i : best;
    best_priority = better ? priority : best_priority;
  }
  return best;
}

}  // namespace

inline std::size_t PctStrategy::highest(std::span<const Action> options) {
  // Attached or not is asked once a pick, not once an option.
  if (layout_of_) return highest_by(options, [this](const Action& action) { return dense_priority(action); });
  return highest_by(options, [this](const Action& action) { return priority_by_key(actor_key(action)); });
}

std::size_t PctStrategy::pick(ChoiceKind, std::span<const Action> options) {
  std::size_t chosen = highest(options);
  while (next_change_ < change_points_.size() && change_points_[next_change_] == step_) {
    // The chosen actor has a priority already (highest() asked for it).
    lower(options[chosen], next_change_ + 1);
    ++next_change_;
    chosen = highest(options);
  }
  ++step_;
  return chosen;
}

// Its own, so that the engine's loop calls pick through one virtual call, not two.
std::size_t PctStrategy::pick_action(std::span<const Action> enabled) { return PctStrategy::pick(ChoiceKind::next_action, enabled); }

namespace {
constexpr StrategyParam params[] = {
    {"depth", ParamType::count, "3", "PCT bug depth d"},
};
}  // namespace

std::span<const StrategyParam> pct_params() { return params; }

std::unique_ptr<Strategy> make_pct_strategy(const StrategySetup& setup) {
  const std::uint64_t depth = setup.count("depth");
  if (depth == 0 || depth > UINT32_MAX) throw InputError(fmt::format("--depth: expected 1 to {}, got {}", UINT32_MAX, depth));
  const PctOptions options{0, static_cast<std::uint32_t>(depth), expected_steps(setup.scenario)};
  return std::make_unique<PctStrategy>(options, setup.sampled());
}

}  // namespace amaxcheck::sched
