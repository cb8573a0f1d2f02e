#pragma once
/// pct(seed, depth): probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi,
/// Nagarakatte, ASPLOS 2010).
///
/// Every actor (host thread, stream, communicator: `actor_key(action)`) gets a random distinct
/// priority >= depth when it first becomes enabled. At each step the enabled action of the
/// highest-priority actor runs. At d-1 change points k_1..k_{d-1}, drawn uniformly from the
/// expected number of steps k, the actor about to run drops to priority i (below every initial
/// priority). A bug of depth d among n actors is then found with probability at least
/// 1/(n * k^(d-1)) per run.
///
/// As an exploration's strategy (the table's "pct", parameter --depth), run i has the seed
/// mix_seed(exploration seed, i) (SampledRuns), for i < --runs, and k = expected_steps(scenario).

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "scheduler/prng.h"
#include "scheduler/strategy.h"
#include "scheduler/strategy_params.h"

namespace amaxcheck::sched {

struct PctOptions {
  std::uint64_t seed = 0;
  std::uint32_t depth = 3;           ///< d: bug depth targeted (d-1 change points)
  std::uint64_t expected_steps = 1;  ///< k: steps of one run (see expected_steps(Scenario))
};

class PctStrategy final : public Strategy {
 public:
  /// One run with `options`.
  explicit PctStrategy(const PctOptions& options);
  /// The runs of a sampled exploration (`options.seed` unused); begin_run picks the run's seed.
  PctStrategy(const PctOptions& options, const SampledRuns& runs);

  /// Lays out the scenario's actors in a dense table (priority by actor index), so a pick finds
  /// each option's priority with one load; unattached (a bare pick() in a test), it uses the
  /// hash table below. Either way the priorities are drawn in the same order, so the same.
  void attach(const Engine& engine) override;
  std::string name() const override { return "pct"; }
  /// seed, depth, expected_steps and the drawn change points.
  nlohmann::ordered_json parameters() const override;
  std::size_t pick(ChoiceKind kind, std::span<const Action> options) override;
  std::size_t pick_action(std::span<const Action> enabled) override;
  StepDetail step_needs() const override { return StepDetail{false, false, false, false}; }
  /// Run i is the run of its sampled seed (SampledRuns::run_seed).
  bool runs_again_alike() const override { return runs_.has_value(); }
  bool begin_run(std::uint64_t index) override;
  std::uint64_t seed() const override { return options_.seed; }

  const std::vector<std::uint64_t>& change_points() const { return change_points_; }

 private:
  /// The priority of the actor of `action` (attached: from the dense table) / of the actor key
  /// `actor` (unattached: from the hash table), drawn when first asked.
  std::uint64_t dense_priority(const Action& action);
  std::uint64_t priority_by_key(std::uint64_t actor);
  /// Sets the priority of the actor of `action` (a change point), which has one already.
  void lower(const Action& action, std::uint64_t priority);
  /// A new actor's initial priority.
  std::uint64_t draw_priority();
  std::size_t highest(std::span<const Action> options);
  /// Starts a run with `seed`: draws the change points, forgets every priority.
  void start(std::uint64_t seed);

  PctOptions options_;
  Prng prng_;
  std::vector<std::uint64_t> change_points_;  ///< sorted step indices (0-based)
  std::size_t next_change_ = 0;
  std::uint64_t step_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> priorities_;  ///< (actor, priority), first seen first
  /// Where each actor of priorities_ is, by actor key: an open-addressed table of a power of two
  /// slots (index + 1; 0 is empty), at most half full, so a pick finds each option's priority in
  /// a probe or two instead of a scan of every actor seen. start() empties it, keeping its size.
  std::vector<std::uint32_t> slots_;
  std::size_t slot_of(std::uint64_t actor) const;
  void grow_slots();
  std::optional<SampledRuns> runs_;
  /// The dense table of an attached strategy: actor index -> priority (0: none drawn yet).
  /// A rank's threads, then its streams, rank by rank, then the communicators.
  const Scenario* layout_of_ = nullptr;  ///< the last attached scenario; null: unattached
  /// Per rank, by ActionKind: the index of the action's lane 0 (issue: the rank's first thread;
  /// execute and join: its first stream; complete: the first communicator, in every row), so an
  /// option's index is a load and an add, with no branch on its kind.
  using KindBases = std::array<std::uint32_t, 4>;
  std::vector<KindBases> kind_base_;
  std::vector<std::uint64_t> dense_priority_;
  std::size_t dense_index(const Action& action) const;
};

/// The strategy table's "pct": its parameters (--depth) and its factory.
std::span<const StrategyParam> pct_params();
std::unique_ptr<Strategy> make_pct_strategy(const StrategySetup& setup);

}  // namespace amaxcheck::sched
