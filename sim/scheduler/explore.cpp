#include "scheduler/explore.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "scheduler/prng.h"
#include "scheduler/replay_strategy.h"
#include "scheduler/strategy_table.h"
#include "util/check.h"

namespace amaxcheck::sched {

const char* to_string(StrategyKind kind) { return strategy_entry(kind).name; }

Coverage coverage_of(StrategyKind kind) { return strategy_entry(kind).coverage; }

bool parse_strategy_kind(const std::string& text, StrategyKind& out) {
  for (const StrategyEntry& entry : strategy_table()) {
    if (text == entry.name) {
      out = entry.kind;
      return true;
    }
  }
  return false;
}

std::uint64_t run_seed(std::uint64_t seed, std::uint64_t index) { return mix_seed(seed, index); }

std::unique_ptr<Strategy> make_run_strategy(const Scenario& scenario, const ExploreOptions& options,
                                            std::uint64_t index) {
  const StrategyEntry& entry = strategy_entry(options.strategy);
  AMAX_CHECK(entry.make_run != nullptr, "make_run_strategy: the exhaustive search is one strategy for all runs");
  return entry.make_run(scenario, options, index);
}

namespace {

/// What an exploration keeps of one run.
struct RunSummary {
  bool done = false;  ///< false: not run, or cut by the time budget (dropped)
  RunOutcome outcome = RunOutcome::finished;
  std::size_t steps = 0;
  std::vector<Hazard> hazards;
};

class Merger {
 public:
  explicit Merger(ExploreResult& result) : result_(result) {}
  /// Adds run `index`; returns true when it showed a hazard.
  bool add(std::uint64_t index, const RunSummary& run) {
    ++result_.runs;
    result_.steps += run.steps;
    if (run.outcome == RunOutcome::step_limit) ++result_.cut_short.step_limited_runs;
    for (const Hazard& hazard : run.hazards) {
      auto [it, fresh] = index_.try_emplace(hazard.key(), result_.hazards.size());
      if (fresh) result_.hazards.push_back(FoundHazard{hazard, index, 0});
      ++result_.hazards[it->second].runs_seen;
    }
    return !run.hazards.empty();
  }

 private:
  ExploreResult& result_;
  std::map<std::string, std::size_t> index_;
};

RunSummary summarize(RunResult&& run) { return RunSummary{true, run.outcome, run.step_count, std::move(run.hazards)}; }

/// The options of every run of an exploration: the step cap resolved once, the deadline set.
RunOptions run_options_for(const Scenario& scenario, const ExploreOptions& options, const ExploreClock& clock,
                           bool record_steps) {
  RunOptions out = options.run;
  out.max_steps = effective_step_cap(scenario, options.run);
  out.deadline = clock.deadline();
  out.record_steps = record_steps;
  return out;
}

/// Re-runs run `index` with steps recorded (no deadline: it already ran in time once).
FailingRun rerun(const Scenario& scenario, const ExploreOptions& options, const RunOptions& run_options,
                 std::uint64_t index) {
  std::unique_ptr<Strategy> strategy = make_run_strategy(scenario, options, index);
  FailingRun failing;
  failing.index = index;
  failing.seed = coverage_of(options.strategy) == Coverage::timed ? 0 : run_seed(options.seed, index);
  failing.strategy = strategy->name();
  failing.parameters = strategy->parameters();
  RunOptions recorded = run_options;
  recorded.record_steps = true;
  recorded.deadline.reset();
  failing.run = run_once(scenario, *strategy, recorded);
  return failing;
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

ExploreResult explore_sampled(const Scenario& scenario, const ExploreOptions& options, ExploreClock& clock) {
  ExploreResult result;
  Merger merger(result);
  const RunOptions run_options = run_options_for(scenario, options, clock, false);
  const unsigned jobs = std::max(1U, options.jobs);
  // Runs are done in blocks; within a block workers take indices from a counter, and the block
  // is merged in index order, so the result does not depend on the number of workers.
  const std::uint64_t block = std::max<std::uint64_t>(256, std::uint64_t{jobs} * 64);
  std::optional<std::uint64_t> first_failing;
  std::vector<RunSummary> summaries;
  std::atomic<std::uint64_t> runs_done{0};
  bool out_of_time = false;
  for (std::uint64_t begin = 0;
       begin < options.runs && !(options.stop_at_first && first_failing) && !out_of_time; begin += block) {
    const std::uint64_t end = std::min(options.runs, begin + block);
    summaries.assign(end - begin, RunSummary{});
    std::atomic<std::uint64_t> next{begin};
    std::atomic<std::uint64_t> lowest_failing{end};
    std::atomic<bool> timed_out{false};
    FirstError error;
    auto work = [&] {
      for (;;) {
        const std::uint64_t i = next.fetch_add(1);
        if (i >= end || timed_out.load()) return;
        if (options.stop_at_first && i > lowest_failing.load()) return;  // past a failure already found
        if (error.before(i)) return;
        if (clock.out_of_time()) {
          timed_out.store(true);
          return;
        }
        try {
          std::unique_ptr<Strategy> strategy = make_run_strategy(scenario, options, i);
          RunResult run = run_once(scenario, *strategy, run_options);
          if (run.outcome == RunOutcome::time_limit) {
            timed_out.store(true);
            return;
          }
          summaries[i - begin] = summarize(std::move(run));
        } catch (...) {
          error.record(i, std::current_exception());
          return;
        }
        clock.ran(runs_done.fetch_add(1) + 1);
        if (!summaries[i - begin].hazards.empty()) {
          std::uint64_t seen = lowest_failing.load();
          while (i < seen && !lowest_failing.compare_exchange_weak(seen, i)) {
          }
        }
      }
    };
    if (jobs == 1) {
      work();
    } else {
      std::vector<std::thread> workers;
      for (unsigned j = 0; j < jobs; ++j) workers.emplace_back(work);
      for (auto& worker : workers) worker.join();
    }
    for (std::uint64_t i = begin; i < end; ++i) {
      if (error.index() == i) error.rethrow();
      if (!summaries[i - begin].done) continue;  // cut by the budget, or never started
      const bool failed = merger.add(i, summaries[i - begin]);
      if (failed && !first_failing) first_failing = i;
      if (failed && options.stop_at_first) break;
    }
    out_of_time = timed_out.load();
  }
  result.cut_short.time_budget = out_of_time;
  if (first_failing) result.first_failure = rerun(scenario, options, run_options, *first_failing);
  return result;
}

ExploreResult explore_exhaustive(const Scenario& scenario, const ExploreOptions& options, ExploreClock& clock) {
  ExploreResult result;
  Merger merger(result);
  ExhaustiveSearch search(options.exhaustive);
  const RunOptions run_options = run_options_for(scenario, options, clock, false);
  std::optional<std::vector<Choice>> failing_choices;
  std::uint64_t failing_index = 0;
  std::uint64_t schedules = 0;
  for (;;) {
    if (clock.out_of_time()) {
      result.cut_short.time_budget = true;
      break;
    }
    if (!search.begin_run()) break;
    RunResult run = run_once(scenario, search, run_options);
    if (run.outcome == RunOutcome::time_limit) {  // dropped: the search ends here
      result.cut_short.time_budget = true;
      break;
    }
    search.end_run(run.outcome == RunOutcome::stuck);
    clock.ran(++schedules);
    if (run.outcome == RunOutcome::stopped) continue;  // abandoned: covered by another run
    const std::uint64_t index = result.runs;
    const bool failed = merger.add(index, summarize(std::move(run)));
    if (failed && !failing_choices) {
      failing_choices = std::move(run.choices);
      failing_index = index;
      if (options.stop_at_first) break;
    }
  }
  result.exhaustive = search.stats();
  result.coverage_complete = search.stats().complete && !(options.stop_at_first && failing_choices);
  result.pruned = search.stats().sleep_blocked + search.stats().bound_skipped;
  result.cut_short.schedule_cap = search.stats().capped;
  result.cut_short.schedule_cap_value = options.exhaustive.max_schedules.value_or(0);
  result.cut_short.bound_skipped = search.stats().bound_skipped;
  result.cut_short.preemption_bound = options.exhaustive.preemption_bound.value_or(0);
  if (failing_choices) {
    ReplayStrategy replay(*failing_choices);
    RunOptions rerun_options = run_options;
    rerun_options.record_steps = true;
    rerun_options.deadline.reset();
    FailingRun failing;
    failing.index = failing_index;
    failing.strategy = search.name();
    failing.parameters = search.parameters();
    failing.run = run_once(scenario, replay, rerun_options);
    result.first_failure = std::move(failing);
  }
  return result;
}

ExploreResult explore_timed(const Scenario& scenario, const ExploreOptions& options, ExploreClock& clock) {
  ExploreResult result;
  Merger merger(result);
  TimedStrategy strategy(scenario, options.cost);
  RunResult run = run_once(scenario, strategy, run_options_for(scenario, options, clock, true));
  if (run.outcome == RunOutcome::time_limit) {  // dropped, and its times measure nothing
    result.cut_short.time_budget = true;
    return result;
  }
  // The figures of a run cut at its step cap measure a run that never ended: none are kept.
  if (run.outcome != RunOutcome::step_limit) result.timing = strategy.timing();
  if (merger.add(0, RunSummary{true, run.outcome, run.step_count, run.hazards})) {
    FailingRun failing;
    failing.strategy = strategy.name();
    failing.parameters = strategy.parameters();
    failing.run = std::move(run);
    result.first_failure = std::move(failing);
  }
  return result;
}

}  // namespace

ExploreResult explore(const Scenario& scenario, const ExploreOptions& options) {
  const Coverage coverage = coverage_of(options.strategy);
  ExploreClock clock(options.time_budget_s, options.progress, coverage == Coverage::sampled ? options.runs : 0);
  ExploreResult result;
  switch (coverage) {
    case Coverage::sampled: result = explore_sampled(scenario, options, clock); break;
    case Coverage::exhaustive: result = explore_exhaustive(scenario, options, clock); break;
    case Coverage::timed: result = explore_timed(scenario, options, clock); break;
  }
  result.coverage = coverage;
  result.step_cap = effective_step_cap(scenario, options.run);
  result.cut_short.step_cap = result.step_cap;
  if (options.time_budget_s) result.cut_short.time_budget_s = *options.time_budget_s;
  result.verdict = decide_verdict(coverage, result.hazards.size(), result.cut_short, result.coverage_complete);
  return result;
}

}  // namespace amaxcheck::sched
