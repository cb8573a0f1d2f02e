#include "scheduler/explore.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "scheduler/pct_strategy.h"
#include "scheduler/prng.h"
#include "scheduler/random_strategy.h"
#include "scheduler/replay_strategy.h"
#include "util/check.h"

namespace amaxcheck::sched {

const char* to_string(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::random: return "random";
    case StrategyKind::pct: return "pct";
    case StrategyKind::exhaustive: return "exhaustive";
    case StrategyKind::timed: return "timed";
  }
  return "?";
}

bool parse_strategy_kind(const std::string& text, StrategyKind& out) {
  for (StrategyKind k : {StrategyKind::random, StrategyKind::pct, StrategyKind::exhaustive, StrategyKind::timed}) {
    if (text == to_string(k)) {
      out = k;
      return true;
    }
  }
  return false;
}

std::uint64_t run_seed(std::uint64_t seed, std::uint64_t index) { return mix_seed(seed, index); }

std::unique_ptr<Strategy> make_run_strategy(const Scenario& scenario, const ExploreOptions& options,
                                            std::uint64_t index) {
  switch (options.strategy) {
    case StrategyKind::random: return std::make_unique<RandomStrategy>(run_seed(options.seed, index));
    case StrategyKind::pct:
      return std::make_unique<PctStrategy>(
          PctOptions{run_seed(options.seed, index), options.pct_depth, expected_steps(scenario)});
    case StrategyKind::timed: return std::make_unique<TimedStrategy>(scenario, options.cost);
    case StrategyKind::exhaustive: break;
  }
  AMAX_CHECK(false, "make_run_strategy: the exhaustive search is one strategy for all runs");
  return nullptr;
}

namespace {

/// What an exploration keeps of one run.
struct RunSummary {
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

RunOptions quiet(const RunOptions& options) {
  RunOptions out = options;
  out.record_steps = false;
  return out;
}

FailingRun rerun(const Scenario& scenario, const ExploreOptions& options, std::uint64_t index) {
  std::unique_ptr<Strategy> strategy = make_run_strategy(scenario, options, index);
  FailingRun failing;
  failing.index = index;
  failing.seed = options.strategy == StrategyKind::timed ? 0 : run_seed(options.seed, index);
  failing.strategy = strategy->name();
  failing.parameters = strategy->parameters();
  RunOptions run_options = options.run;
  run_options.record_steps = true;
  failing.run = run_once(scenario, *strategy, run_options);
  return failing;
}

ExploreResult explore_sampled(const Scenario& scenario, const ExploreOptions& options) {
  ExploreResult result;
  Merger merger(result);
  const RunOptions run_options = quiet(options.run);
  const unsigned jobs = std::max(1U, options.jobs);
  // Runs are done in blocks; within a block workers take indices from a counter, and the block
  // is merged in index order, so the result does not depend on the number of workers.
  const std::uint64_t block = std::max<std::uint64_t>(256, std::uint64_t{jobs} * 64);
  std::optional<std::uint64_t> first_failing;
  std::vector<RunSummary> summaries;
  for (std::uint64_t begin = 0; begin < options.runs && !(options.stop_at_first && first_failing); begin += block) {
    const std::uint64_t end = std::min(options.runs, begin + block);
    summaries.assign(end - begin, RunSummary{});
    std::atomic<std::uint64_t> next{begin};
    std::atomic<std::uint64_t> lowest_failing{end};
    auto work = [&] {
      for (;;) {
        const std::uint64_t i = next.fetch_add(1);
        if (i >= end) return;
        if (options.stop_at_first && i > lowest_failing.load()) return;  // past a failure already found
        std::unique_ptr<Strategy> strategy = make_run_strategy(scenario, options, i);
        RunResult run = run_once(scenario, *strategy, run_options);
        summaries[i - begin] = RunSummary{run.step_count, std::move(run.hazards)};
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
      const bool failed = merger.add(i, summaries[i - begin]);
      if (failed && !first_failing) first_failing = i;
      if (failed && options.stop_at_first) break;
    }
  }
  if (first_failing) result.first_failure = rerun(scenario, options, *first_failing);
  return result;
}

ExploreResult explore_exhaustive(const Scenario& scenario, const ExploreOptions& options) {
  ExploreResult result;
  Merger merger(result);
  ExhaustiveSearch search(options.exhaustive);
  const RunOptions run_options = quiet(options.run);
  std::optional<std::vector<Choice>> failing_choices;
  std::uint64_t failing_index = 0;
  while (search.begin_run()) {
    RunResult run = run_once(scenario, search, run_options);
    search.end_run();
    if (run.outcome == RunOutcome::stopped) continue;  // abandoned: covered by another run
    const std::uint64_t index = result.runs;
    const bool failed = merger.add(index, RunSummary{run.step_count, std::move(run.hazards)});
    if (failed && !failing_choices) {
      failing_choices = std::move(run.choices);
      failing_index = index;
      if (options.stop_at_first) break;
    }
  }
  result.exhaustive = search.stats();
  result.coverage_complete = search.stats().complete && !(options.stop_at_first && failing_choices);
  result.pruned = search.stats().sleep_blocked + search.stats().bound_skipped;
  if (failing_choices) {
    ReplayStrategy replay(*failing_choices);
    RunOptions rerun_options = options.run;
    rerun_options.record_steps = true;
    FailingRun failing;
    failing.index = failing_index;
    failing.strategy = search.name();
    failing.parameters = search.parameters();
    failing.run = run_once(scenario, replay, rerun_options);
    result.first_failure = std::move(failing);
  }
  return result;
}

ExploreResult explore_timed(const Scenario& scenario, const ExploreOptions& options) {
  ExploreResult result;
  Merger merger(result);
  TimedStrategy strategy(scenario, options.cost);
  RunOptions run_options = options.run;
  run_options.record_steps = true;
  RunResult run = run_once(scenario, strategy, run_options);
  result.timing = strategy.timing();
  if (merger.add(0, RunSummary{run.step_count, run.hazards})) {
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
  switch (options.strategy) {
    case StrategyKind::random:
    case StrategyKind::pct: return explore_sampled(scenario, options);
    case StrategyKind::exhaustive: return explore_exhaustive(scenario, options);
    case StrategyKind::timed: return explore_timed(scenario, options);
  }
  return {};
}

}  // namespace amaxcheck::sched
