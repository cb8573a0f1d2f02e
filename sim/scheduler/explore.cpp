#include "scheduler/explore.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "scheduler/prng.h"
#include "scheduler/replay_strategy.h"
#include "scheduler/strategy_table.h"
#include "util/check.h"

namespace amaxcheck::sched {

std::uint64_t run_seed(std::uint64_t seed, std::uint64_t index) { return mix_seed(seed, index); }

std::unique_ptr<Strategy> make_strategy(const Scenario& scenario, const ExploreOptions& options) {
  const StrategyEntry& entry = strategy_entry(options.strategy);
  return entry.make(StrategySetup(scenario, options.seed, options.runs, entry.params, options.args));
}

namespace {

/// What an exploration keeps of one run.
struct RunSummary {
  bool done = false;  ///< false: not run, beyond the last run, or cut by the time budget (dropped)
  RunOutcome outcome = RunOutcome::finished;
  std::size_t steps = 0;
  std::vector<Hazard> hazards;
  /// For a run with hazards that may be the first failing one: what reproduces it (the run's
  /// choices only, no steps; the index is set when it is merged).
  std::unique_ptr<FailingRun> failing;
};

class Merger {
 public:
  explicit Merger(ExploreResult& result) : result_(result) {}
  struct Added {
    bool failed = false;  ///< the run showed a hazard
    bool first = false;   ///< ... one that no earlier run showed
  };
  /// Adds run `index`.
  Added add(std::uint64_t index, const RunSummary& run) {
    ++result_.runs;
    result_.steps += run.steps;
    if (run.outcome == RunOutcome::step_limit) ++result_.cut_short.step_limited_runs;
    Added added{!run.hazards.empty(), false};
    for (const Hazard& hazard : run.hazards) {
      auto [it, fresh] = index_.try_emplace(hazard.key(), result_.hazards.size());
      if (fresh) result_.hazards.push_back(FoundHazard{hazard, index, 0});
      added.first |= fresh;
      ++result_.hazards[it->second].runs_seen;
    }
    return added;
  }

 private:
  ExploreResult& result_;
  std::map<std::string, std::size_t> index_;
};

/// The options of every run of an exploration: the step cap resolved once, the deadline set.
RunOptions run_options_for(const Scenario& scenario, const ExploreOptions& options, const ExploreClock& clock) {
  RunOptions out = options.run;
  out.max_steps = effective_step_cap(scenario, options.run);
  out.deadline = clock.deadline();
  out.record_steps = false;
  return out;
}

/// The first exception of a block of runs, by run index, so `jobs` does not change which one
/// the caller sees.
class FirstError {
 public:
  void record(std::uint64_t index, std::exception_ptr error) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!error_ || index < index_) {
      error_ = std::move(error);
      index_ = index;
    }
    any_.store(true);
  }
  /// Whether run `index` need not start: an earlier run already failed this way.
  bool before(std::uint64_t index) const {
    if (!any_.load()) return false;
    const std::lock_guard<std::mutex> lock(mutex_);
    return index_ < index;
  }
  std::optional<std::uint64_t> index() const { return error_ ? std::optional<std::uint64_t>(index_) : std::nullopt; }
  [[noreturn]] void rethrow() const { std::rethrow_exception(error_); }

 private:
  mutable std::mutex mutex_;
  std::atomic<bool> any_{false};
  std::exception_ptr error_;
  std::uint64_t index_ = 0;
};

void lower_to(std::atomic<std::uint64_t>& value, std::uint64_t to) {
  std::uint64_t seen = value.load();
  while (to < seen && !value.compare_exchange_weak(seen, to)) {
  }
}

/// Runs [begin, end) of an exploration. Workers take indices from a counter, each on its own
/// strategy instance; the block is then merged in index order, so the result does not depend
/// on the number of workers.
class Block {
 public:
  Block(std::uint64_t begin, std::uint64_t end, bool capture)
      : begin_(begin), end_(end), capture_(capture), summaries_(end - begin), next_(begin), lowest_failing_(end),
        last_(end) {}

  /// One worker: runs indices until the block, the exploration or the time budget is over.
  void work(Strategy& strategy, Runner& runner, const ExploreOptions& options, ExploreClock& clock,
            std::atomic<std::uint64_t>& runs_done) {
    for (;;) {
      const std::uint64_t i = next_.fetch_add(1);
      if (i >= last_.load() || timed_out_.load()) return;
      if (options.stop_at_first && i > lowest_failing_.load()) return;  // past a failure already found
      if (error_.before(i)) return;
      bool failed = false;
      try {
        if (!strategy.begin_run(i)) {  // no run i: the exploration ends here
          lower_to(last_, i);
          return;
        }
        if (clock.out_of_time()) {
          timed_out_.store(true);
          return;
        }
        RunResult run = runner.run(strategy);
        if (run.outcome == RunOutcome::time_limit) {
          timed_out_.store(true);
          return;
        }
        strategy.end_run(run);
        failed = !run.hazards.empty() && run.outcome != RunOutcome::stopped;
        RunSummary& summary = summaries_[i - begin_];
        // The first failing run is kept; without stop_at_first, any run that may be the first
        // to show a hazard (merge keeps those that are).
        if (failed && ((capture_ && i < lowest_failing_.load()) || !options.stop_at_first)) {
          summary.failing = std::make_unique<FailingRun>(
              FailingRun{0, strategy.seed(), strategy.name(), strategy.parameters(), RunResult{}});
          // Its choices, if recorded; else what it found, to check the run made again against.
          summary.failing->run.choices = std::move(run.choices);
          summary.failing->run.outcome = run.outcome;
          summary.failing->run.step_count = run.step_count;
          summary.failing->run.hazards = run.hazards;
        }
        summary.outcome = run.outcome;
        summary.steps = run.step_count;
        summary.hazards = std::move(run.hazards);
        summary.done = true;
      } catch (...) {
        error_.record(i, std::current_exception());
        return;
      }
      clock.ran(runs_done.fetch_add(1) + 1);
      if (failed) lower_to(lowest_failing_, i);
    }
  }

  /// Merges the block in index order; rethrows the first worker exception where it occurred.
  /// `stopped` counts the runs the strategy ended early so far (they do not count).
  void merge(Merger& merger, const ExploreOptions& options, std::optional<FailingRun>& first_failure,
             std::vector<FailingRun>& later_failures, std::uint64_t& stopped, bool& stop) {
    for (std::uint64_t i = begin_; i < end_; ++i) {
      if (error_.index() == i) error_.rethrow();
      RunSummary& summary = summaries_[i - begin_];
      if (!summary.done) continue;  // beyond the last run, cut by the budget, or never started
      ran_any_ = true;
      if (summary.outcome == RunOutcome::stopped) {
        ++stopped;
        continue;
      }
      const std::uint64_t index = i - stopped;
      const Merger::Added added = merger.add(index, summary);
      const bool failed = added.failed;
      if (failed && !first_failure) {
        AMAX_CHECK(summary.failing != nullptr, "explore: the first failing run was not kept");
        first_failure = std::move(*summary.failing);
        first_failure->index = index;
      } else if (added.first && !options.stop_at_first) {
        AMAX_CHECK(summary.failing != nullptr, "explore: a run that first showed a hazard was not kept");
        later_failures.push_back(std::move(*summary.failing));
        later_failures.back().index = index;
      }
      if (failed && options.stop_at_first) {
        stop = true;
        return;
      }
    }
  }

  bool timed_out() const { return timed_out_.load(); }
  /// Whether the strategy refused a run of this block: the exploration's runs are over.
  bool runs_over() const { return last_.load() < end_; }
  /// Whether merge() met a run that ran (counted or stopped by its strategy).
  bool ran_any() const { return ran_any_; }

 private:
  std::uint64_t begin_, end_;
  bool capture_;
  std::vector<RunSummary> summaries_;
  std::atomic<std::uint64_t> next_;
  std::atomic<std::uint64_t> lowest_failing_;
  std::atomic<std::uint64_t> last_;  ///< the first index the strategy refused (end_ when none)
  std::atomic<bool> timed_out_{false};
  FirstError error_;
  bool ran_any_ = false;
};

std::vector<std::string> hazard_keys(const RunResult& run) {
  std::vector<std::string> keys;
  for (const Hazard& h : run.hazards) keys.push_back(h.key());
  return keys;
}

/// Re-runs a failing run (the first, or with --keep-going a later one) with steps recorded (no
/// deadline: it already ran in time once): by replaying its choices, or, where the runs kept
/// none, as run `index` of `strategy` again (Strategy::runs_again_alike), which must find what
/// it found the first time.
void record_steps_of(const Scenario& scenario, const RunOptions& run_options, Strategy& strategy, FailingRun& failing) {
  RunOptions recorded = run_options;
  recorded.record_steps = true;
  recorded.record_choices = true;
  recorded.deadline.reset();
  if (!run_options.record_choices) {
    const RunResult found = std::move(failing.run);
    AMAX_CHECK(strategy.begin_run(failing.index), fmt::format("failing run {} cannot be started again", failing.index));
    failing.run = run_once(scenario, strategy, recorded);
    AMAX_CHECK(failing.run.outcome == found.outcome && failing.run.step_count == found.step_count &&
                   hazard_keys(failing.run) == hazard_keys(found),
               fmt::format("failing run {} made again did not run as it did", failing.index));
    return;
  }
  ReplayStrategy replay(std::move(failing.run.choices));
  try {
    failing.run = run_once(scenario, replay, recorded);
  } catch (const InputError& e) {
    throw InternalError(fmt::format("re-running failing run {} with its steps recorded: {}", failing.index, e.what()));
  }
}

}  // namespace

void record_steps(const Scenario& scenario, const ExploreOptions& options, FailingRun& failing) {
  if (options.before_recording) options.before_recording();
  const std::unique_ptr<Strategy> strategy = make_strategy(scenario, options);
  const ExploreClock no_budget(std::nullopt, nullptr);
  RunOptions run_options = run_options_for(scenario, options, no_budget);
  run_options.record_choices = !strategy->runs_again_alike();  // as explore's runs
  record_steps_of(scenario, run_options, *strategy, failing);
}

ExploreResult explore(const Scenario& scenario, const ExploreOptions& options) {
  const StrategyEntry& entry = strategy_entry(options.strategy);
  // Its readers refuse 0 (`--runs`, a suite's "runs"): a sampled exploration of no runs would
  // be "no hazard found" about a design it never ran.
  AMAX_CHECK(entry.coverage != Coverage::sampled || options.runs > 0, "a sampled exploration needs at least one run");
  ExploreClock clock(options.time_budget_s, options.progress, entry.coverage == Coverage::sampled ? options.runs : 0);
  const unsigned jobs = entry.runs == RunOrder::independent ? std::max(1U, options.jobs) : 1U;
  std::vector<std::unique_ptr<Strategy>> strategies;
  for (unsigned j = 0; j < jobs; ++j) strategies.push_back(make_strategy(scenario, options));
  RunOptions run_options = run_options_for(scenario, options, clock);
  // Only the first failing run's choices are needed: a strategy that can make it again need
  // not have any run keep them (record_steps_of makes it again).
  run_options.record_choices = !strategies.front()->runs_again_alike();
  // One engine per worker, reset between its runs.
  std::vector<std::unique_ptr<Runner>> runners;
  for (unsigned j = 0; j < jobs; ++j) runners.push_back(std::make_unique<Runner>(scenario, run_options));

  ExploreResult result;
  Merger merger(result);
  std::optional<FailingRun> first_failure;
  std::uint64_t stopped = 0;
  std::atomic<std::uint64_t> runs_done{0};
  // Blocks grow as the exploration goes on. For one worker, from one run up to 32: an
  // exploration of a few runs pays for no more. For several, from 256 runs up to 4096: a block
  // starts its workers and ends with each waiting for the slowest, a fixed cost that blocks of
  // a few milliseconds of fast runs would feel (results never depend on the block sizes: blocks
  // merge in index order).
  std::uint64_t block_size = jobs == 1 ? 1 : std::max<std::uint64_t>(256, std::uint64_t{jobs} * 64);
  const std::uint64_t max_block_size = jobs == 1 ? 32 : std::max<std::uint64_t>(4096, block_size);
  for (std::uint64_t begin = 0;; begin += block_size) {
    if (begin > 0) block_size = std::min<std::uint64_t>(2 * block_size, max_block_size);
    Block block(begin, begin + block_size, !first_failure);
    auto work = [&](Strategy& strategy, Runner& runner) { block.work(strategy, runner, options, clock, runs_done); };
    if (jobs == 1) {
      work(*strategies.front(), *runners.front());
    } else {
      std::vector<std::thread> workers;
      for (unsigned j = 0; j < jobs; ++j) workers.emplace_back(work, std::ref(*strategies[j]), std::ref(*runners[j]));
      for (auto& worker : workers) worker.join();
    }
    bool stop = false;
    block.merge(merger, options, first_failure, result.later_failures, stopped, stop);
    result.cut_short.time_budget = block.timed_out();
    if (stop || block.timed_out() || block.runs_over()) break;
    // A block that ran nothing, with no cause that ends the exploration, means a worker gave
    // up on its runs without saying why: the next block would do the same, and a sampled
    // exploration would end "clean" after runs that never ran.
    AMAX_CHECK(block.ran_any(), fmt::format("explore: runs {} to {} stopped before any of them ran, with no "
                                            "cause (time budget, last run, failure) recorded", begin, begin + block_size - 1));
  }

  runners.clear();  // their engines' memory, before the failing run is recorded on a new one
  strategies.front()->report(result);
  if (options.stop_at_first && first_failure) result.coverage_complete = false;  // it stopped there
  if (first_failure) {
    if (options.before_recording) options.before_recording();
    record_steps_of(scenario, run_options, *strategies.front(), *first_failure);
    result.first_failure = std::move(first_failure);
  }
  result.coverage = entry.coverage;
  result.step_cap = run_options.max_steps;
  result.cut_short.step_cap = result.step_cap;
  if (options.time_budget_s) result.cut_short.time_budget_s = *options.time_budget_s;
  // A search that visited every branch, some of them cut at the step cap, did not cover those
  // runs' schedules: no cap leaves coverage complete.
  if (result.cut_short.any()) result.coverage_complete = false;
  result.verdict = decide_verdict(entry.coverage, result.hazards.size(), result.cut_short, result.coverage_complete);
  return result;
}

}  // namespace amaxcheck::sched
