#pragma once
/// exhaustive: stateless depth-first search over schedules, with dynamic partial-order
/// reduction.
///
/// The search re-executes the scenario from the start for every schedule (as loom and CHESS
/// do), following the recorded prefix and then extending it. With `reduction` on it is
/// Source-DPOR with sleep sets (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014):
/// - after each run, every reversible race e < e' of the run (dependent steps of different
///   actors with no step ordered between them) adds one of the "initials" of
///   notdep(e).e' to the backtrack set of the state before e, unless one is already there;
/// - sleep sets carry actors whose exploration from an earlier state already covers the
///   continuation, so the search explores exactly one complete run per equivalence class
///   (Mazurkiewicz trace); runs in which every enabled actor sleeps are abandoned and counted
///   as `sleep_blocked` (the reduction's overhead).
/// Dependence is `dependent()` over Step::touches and actor_key (see dependence.h); happens-
/// before and races are kept incrementally over the path (path_clocks.h), and races that can
/// never be reversed (Touch::needs) add nothing. A step can also disable another actor's
/// action (a host thread's issue onto a stream another thread is synchronizing): the disabled
/// action may then never run. A synchronization that does run races with every such step not
/// ordered before its thread's previous step (Touch::disables on the read); when the run got
/// stuck, the states before such steps are expanded fully instead, and so are states whose
/// step disabled an action that was enabled. An actor whose action is no longer enabled leaves
/// the sleep set.
///
/// Without reduction every enabled action is a backtrack point: the search visits every
/// interleaving (the naive count). An optional preemption bound (a preemption is switching
/// away from an actor that is still enabled) and a cap on schedules make the search
/// incomplete; `stats().complete` says whether it covered everything.
///
/// Use: `for (i = 0; search.begin_run(i); ++i) search.end_run(run_once(scenario, search, options));`
/// (explore() does this, as the table's "exhaustive" with --no-reduction, --preemption-bound and
/// --max-schedules). Runs the search ends early (pick returns stop) count as sleep-blocked, not
/// as explored; the exploration does not count them either.

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <vector>

#include "scheduler/path_clocks.h"
#include "scheduler/strategy.h"
#include "scheduler/strategy_params.h"
#include "scheduler/thread_block.h"

namespace amaxcheck::sched {

/// Deliberately unsound reductions, so the differential property (property_tests/) can show
/// that it notices one. Never set outside tests.
enum class ReductionMutant : std::uint8_t {
  none,
  reads_commute,     ///< drops a dependence case: a read and a write of one object commute
  ignore_disabling,  ///< does not expand where a step may disable a host synchronization
};

struct ExhaustiveOptions {
  bool reduction = true;
  std::optional<std::uint32_t> preemption_bound;
  std::optional<std::uint64_t> max_schedules;  ///< cap on complete runs explored
  ReductionMutant mutant = ReductionMutant::none;
};

struct ExhaustiveStats {
  std::uint64_t explored = 0;       ///< runs that reached their end (finished or stuck)
  std::uint64_t sleep_blocked = 0;  ///< runs abandoned: every continuation already covered
  std::uint64_t bound_skipped = 0;  ///< branches not taken because of the preemption bound
  std::uint64_t races = 0;          ///< reversible races that added a backtrack point
  bool capped = false;              ///< stopped by max_schedules
  bool complete = false;            ///< the search ended and covered every class
};

class ExhaustiveSearch final : public Strategy {
 public:
  /// `path_steps`: how long one run of the scenario is (expected_steps), to size the block the
  /// search's state comes from; 0 when unknown.
  explicit ExhaustiveSearch(ExhaustiveOptions options = {}, std::uint64_t path_steps = 0);

  std::string name() const override { return "exhaustive"; }
  nlohmann::ordered_json parameters() const override;
  std::size_t pick(ChoiceKind kind, std::span<const Action> options) override;
  void on_step(const Step& step) override;
  /// Dependence between steps comes from their touches only.
  StepDetail step_needs() const override { return StepDetail{false, false, true}; }

  /// Prepares the next schedule (the index is not needed: runs come in order); false when the
  /// search is over.
  bool begin_run(std::uint64_t index) override;
  /// Closes the run that just ended and chooses the next branch point. A stuck run (work left:
  /// a host synchronization may be blocked for good) expands more, see
  /// expand_where_a_step_disables_another.
  void end_run(const RunResult& run) override;
  /// The statistics, whether the search completed, and what cut it short (the schedule cap,
  /// branches the preemption bound skipped).
  void report(ExploreResult& result) const override;
  const ExhaustiveStats& stats() const { return stats_; }

 private:
  /// The search's state lives in a few arenas shared by every node of the path, in path order
  /// (a node's slices come after its parent's), so pushing a node allocates nothing once they
  /// have grown and popping one just shortens them. A step's touches are recorded once, where
  /// the step is new; sleep entries name them by their place in the arena instead of copying.
  struct TouchRange {
    std::size_t begin = 0;
    std::uint32_t count = 0;
  };
  struct Option {
    Action action;
    std::uint32_t actor = 0;     ///< PathClocks' dense id of its actor_key
    std::uint8_t backtrack = 0;  ///< to be explored
    std::uint8_t done = 0;       ///< explored (or skipped)
    TouchRange touches;          ///< its step's touches, once run
  };
  struct SleepEntry {
    std::uint32_t actor = 0;
    TouchRange touches;
  };
  struct Node {
    std::size_t option_begin = 0;  ///< into option_arena_
    std::uint32_t option_count = 0;
    std::size_t sleep_begin = 0;   ///< into sleep_arena_: the sleep set on entering this state
    std::uint32_t sleep_count = 0;
    std::size_t touch_begin = 0;   ///< touch_arena_ before this node's first step
    std::size_t chosen = 0;
    std::uint32_t preemptions = 0;         ///< preemptions on the path before this node
    std::int64_t previous_actor = -1;      ///< actor of the step before this node, -1 for none
  };

  std::span<Option> options_of(const Node& node) { return {option_arena_.data() + node.option_begin, node.option_count}; }
  std::span<const Option> options_of(const Node& node) const {
    return {option_arena_.data() + node.option_begin, node.option_count};
  }
  std::span<const SleepEntry> sleep_of(const Node& node) const {
    return {sleep_arena_.data() + node.sleep_begin, node.sleep_count};
  }
  std::span<const Touch> touches(TouchRange range) const { return {touch_arena_.data() + range.begin, range.count}; }
  std::uint32_t chosen_actor(const Node& node) const { return option_arena_[node.option_begin + node.chosen].actor; }

  bool asleep(const Node& node, std::size_t option) const;
  bool preempts(const Node& node, std::size_t option) const;
  bool over_bound(const Node& node, std::size_t option) const;
  /// Appends the sleep set of a child of `parent` whose enabled actors are `enabled`.
  void push_child_sleep(const Node& parent, std::span<const Option> enabled);
  /// Appends a node for `options` (not yet on the stack) and returns it.
  Node make_node(std::span<const Action> options);
  /// Shortens the arenas to what the nodes below `node` use.
  void drop_arenas_of(const Node& node);
  void add_backtrack_points_for_races();
  void expand_where_a_step_disables_another();
  bool advance_to_next_branch();

  ExhaustiveOptions options_;
  ExhaustiveStats stats_;
  /// Every list below comes from this one block (growing when a list outgrows it, freed with
  /// the search): a search of a small scenario otherwise spends a good part of its time
  /// allocating and freeing each list as it grows. Its first part is this thread's spare block
  /// (thread_block.h), so searches run one after another allocate it once.
  ThreadBlock block_;
  std::pmr::monotonic_buffer_resource memory_;
  std::pmr::vector<Node> stack_;
  std::pmr::vector<Option> option_arena_;
  std::pmr::vector<SleepEntry> sleep_arena_;
  std::pmr::vector<Touch> touch_arena_;
  PathClocks clocks_;  ///< happens-before over the path, shared between runs up to first_new_
  std::size_t depth_ = 0;
  std::size_t first_new_ = 0;  ///< first path index whose step is new in this run
  bool aborted_ = false;      ///< pick() returned stop in this run
  std::pmr::vector<std::uint32_t> last_enabled_;  ///< actors enabled where the run ended (empty: none)
  bool stuck_ = false;                       ///< the run ended with work left
  bool bound_abort_ = false;  ///< ... because of the preemption bound, not sleep sets
  bool finished_ = false;
  bool started_ = false;
  // add_backtrack_points_for_races' scratch lists, kept so a run allocates none.
  std::pmr::vector<std::size_t> races_;
  std::pmr::vector<std::uint32_t> first_in_v_, initials_;
};

/// The strategy table's "exhaustive": its parameters (--max-schedules, --preemption-bound,
/// --no-reduction) and its factory.
std::span<const StrategyParam> exhaustive_params();
std::unique_ptr<Strategy> make_exhaustive_search(const StrategySetup& setup);

}  // namespace amaxcheck::sched
