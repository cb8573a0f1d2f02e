// Exhaustive search on litmus scenarios whose interleavings are known in closed form.
#include "scheduler/exhaustive_strategy.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "scheduler/dependence.h"
#include "scheduler/run.h"
#include "scenarios.h"

namespace amaxcheck::sched {
namespace {

using testing::independent_syncs;
using testing::signalling_threads;

std::uint64_t factorial(std::uint64_t n) { return n <= 1 ? 1 : n * factorial(n - 1); }

/// (nk)! / (k!)^n
std::uint64_t naive_count(std::uint64_t n, std::uint64_t k) {
  std::uint64_t denominator = 1;
  for (std::uint64_t i = 0; i < n; ++i) denominator *= factorial(k);
  return factorial(n * k) / denominator;
}

/// The Mazurkiewicz trace of a run, as the set of ordered dependent pairs of its events
/// (an event is the n-th step of an actor). Two runs are equivalent iff these sets are equal.
std::string trace_class(const RunResult& run) {
  std::map<std::uint64_t, std::uint32_t> occurrences;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> ids;
  for (const Step& step : run.steps) {
    const std::uint64_t actor = actor_key(step.action);
    ids.emplace_back(actor, occurrences[actor]++);
  }
  std::set<std::string> edges;
  for (std::size_t j = 0; j < run.steps.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      if (dependent(ids[i].first, run.steps[i].touches, ids[j].first, run.steps[j].touches)) {
        edges.insert(std::to_string(ids[i].first) + "." + std::to_string(ids[i].second) + "<" +
                     std::to_string(ids[j].first) + "." + std::to_string(ids[j].second));
      }
    }
  }
  std::string out;
  for (const auto& e : edges) out += e + ";";
  return out;
}

struct Exploration {
  ExhaustiveStats stats;
  std::set<std::string> classes;  ///< classes of the runs that reached their end
  std::uint64_t complete_runs = 0;
};

Exploration explore_all(const Scenario& scenario, ExhaustiveOptions options) {
  ExhaustiveSearch search(options);
  Exploration out;
  for (std::uint64_t i = 0; search.begin_run(i); ++i) {
    RunResult run = run_once(scenario, search);
    if (run.outcome != RunOutcome::stopped) {
      ++out.complete_runs;
      out.classes.insert(trace_class(run));
    }
    search.end_run(run);
  }
  out.stats = search.stats();
  return out;
}

ExhaustiveOptions naive() { return ExhaustiveOptions{false, std::nullopt, std::nullopt}; }

TEST(Exhaustive, without_reduction_visits_exactly_the_naive_interleaving_count) {
  for (auto [n, k] : {std::pair{2u, 1u}, {2u, 2u}, {2u, 3u}, {3u, 1u}, {3u, 2u}}) {
    const Exploration e = explore_all(independent_syncs(n, k), naive());
    EXPECT_EQ(e.stats.explored, naive_count(n, k)) << n << " ranks x " << k << " syncs";
    EXPECT_EQ(e.stats.sleep_blocked, 0u);
    EXPECT_TRUE(e.stats.complete);
  }
}

TEST(Exhaustive, with_reduction_explores_one_schedule_when_ranks_share_nothing) {
  for (auto [n, k] : {std::pair{2u, 2u}, {3u, 2u}, {4u, 2u}}) {
    const Exploration e = explore_all(independent_syncs(n, k), ExhaustiveOptions{});
    EXPECT_EQ(e.stats.explored, 1u) << n << " ranks x " << k << " syncs: one equivalence class";
    EXPECT_LE(e.stats.explored + e.stats.sleep_blocked, 1u + e.stats.sleep_blocked);
    EXPECT_TRUE(e.stats.complete);
  }
}

TEST(Exhaustive, with_reduction_explores_each_equivalence_class_exactly_once) {
  // 3 threads, 2 of which signal one shared flag: 3!/(1!)^3 = 6 interleavings, 2 classes.
  const Scenario s = signalling_threads(3, 2, 1);
  const Exploration all = explore_all(s, naive());
  ASSERT_EQ(all.stats.explored, 6u);
  ASSERT_EQ(all.classes.size(), 2u);
  const Exploration reduced = explore_all(s, ExhaustiveOptions{});
  EXPECT_EQ(reduced.stats.explored, all.classes.size());
  EXPECT_EQ(reduced.classes, all.classes) << "every class is covered";
  EXPECT_TRUE(reduced.stats.complete);
}

TEST(Exhaustive, with_reduction_covers_every_class_of_a_scenario_with_collectives) {
  const Scenario s = testing::racy_collective(2);
  const Exploration all = explore_all(s, naive());
  const Exploration reduced = explore_all(s, ExhaustiveOptions{});
  EXPECT_EQ(reduced.classes, all.classes);
  EXPECT_EQ(reduced.stats.explored, all.classes.size()) << "no class is explored twice";
  EXPECT_LE(reduced.stats.explored + reduced.stats.sleep_blocked, all.classes.size() + reduced.stats.sleep_blocked);
  EXPECT_LT(reduced.stats.explored, all.stats.explored);
  RecordProperty("naive", std::to_string(all.stats.explored));
  RecordProperty("classes", std::to_string(all.classes.size()));
}

TEST(Exhaustive, with_reduction_tries_a_pair_completing_before_another_pair_s_side_joins) {
  // A complete of a communicator finishes whichever ready send / recv pair comes first, so it
  // was enabled, doing something else, before the last side of the pair it finished joined.
  // The pair's sides were once marked as needed (Touch::needs): the search never tried rank 1's
  // send joining last, the only order in which rank 2 reads y before it arrives, and called the
  // scenario proven clean (random runs find the wrong value within a few dozen runs).
  ExhaustiveSearch search;
  bool wrong_value = false;
  for (std::uint64_t i = 0; search.begin_run(i); ++i) {
    const RunResult run = run_once(testing::group_completed_in_part(false, true), search);
    for (const Hazard& h : run.hazards) wrong_value |= h.kind == HazardKind::value_mismatch;
    search.end_run(run);
  }
  EXPECT_TRUE(search.stats().complete);
  EXPECT_TRUE(wrong_value);
}

TEST(Exhaustive, with_reduction_reverses_a_race_whose_steps_are_far_apart) {
  // Thread a fills x, records e and then issues ten more fills, all on stream s1; thread b waits
  // for e on s2 and reads x. The first schedule runs a's issues first, so b's wait meets the
  // record eleven steps after it and orders the read. Only the reversal of those two issues
  // (the wait first, which waits for nothing) shows the race between the fill and the read, and
  // no other race of the run leads there.
  ScenarioBuilder b("far_apart_race");
  const RankId r = b.rank();
  const ThreadId a = b.thread(r, "a"), t_b = b.thread(r, "b");
  const StreamId s1 = b.stream(r, "s1"), s2 = b.stream(r, "s2");
  const EventId e = b.event(r, "e");
  const BufferId x = b.buffer(r, "x", 1), y = b.buffer(r, "y", 1), z = b.buffer(r, "z", 1);
  b.op(r, a, ScenarioBuilder::fill(s1, {x, 0, 1}, {1.0f}, "fill_x"));
  b.op(r, a, ScenarioBuilder::record(s1, e));
  for (int i = 0; i < 10; ++i) b.op(r, a, ScenarioBuilder::fill(s1, {y, 0, 1}, {2.0f}, "fill_y"));
  b.op(r, t_b, ScenarioBuilder::wait(s2, e));
  b.op(r, t_b, ScenarioBuilder::copy(s2, {x, 0, 1}, {z, 0, 1}, "read_x"));
  const Scenario s = b.build();
  ExhaustiveSearch search;
  bool race = false;
  for (std::uint64_t i = 0; search.begin_run(i); ++i) {
    const RunResult run = run_once(s, search);
    for (const Hazard& h : run.hazards) race |= h.kind == HazardKind::data_race;
    search.end_run(run);
  }
  EXPECT_TRUE(search.stats().complete);
  EXPECT_TRUE(race) << "the search never ran the wait before the record (" << search.stats().explored << " schedules)";
}

/// The keys of every hazard of every run of an exhaustive search of `s`.
std::set<std::string> hazard_keys(const Scenario& s, ExhaustiveOptions options) {
  ExhaustiveSearch search(options);
  std::set<std::string> keys;
  for (std::uint64_t i = 0; search.begin_run(i); ++i) {
    const RunResult run = run_once(s, search);
    for (const Hazard& h : run.hazards) keys.insert(h.key());
    search.end_run(run);
  }
  EXPECT_TRUE(search.stats().complete);
  return keys;
}

TEST(Exhaustive, with_reduction_reverses_a_write_that_disables_a_synchronization_in_a_stuck_run) {
  // Thread t1's recv has no send, so stream s0 never drains. Thread t0 records e on s0 and then
  // synchronizes on e and on the device: it hangs too if the recv is queued before the record
  // runs, and finishes if not. The recv's issue may disable t0's synchronizations
  // (Touch::disables), and the run is stuck either way: the search must also try the orders in
  // which they run first, where only the recv is stuck (path_clocks.h; a search that skipped
  // them reported just the two hangs of t0).
  ScenarioBuilder b("disabling_write");
  const RankId r = b.rank();
  const CommId all = b.comm("all", {r});
  const ThreadId t0 = b.thread(r, "t0"), t1 = b.thread(r, "t1");
  const StreamId s0 = b.stream(r, "s0");
  const EventId e = b.event(r, "e");
  const BufferId x = b.buffer(r, "x", 1);
  b.op(r, t0, ScenarioBuilder::record(s0, e));
  b.op(r, t0, ScenarioBuilder::host(OpKind::event_synchronize, e));
  b.op(r, t0, ScenarioBuilder::host(OpKind::device_synchronize));
  b.op(r, t1, ScenarioBuilder::recv(s0, all, 0, {x, 0, 1}, "recv", 1));
  const Scenario s = b.build();
  const std::set<std::string> naive_keys = hazard_keys(s, naive());
  EXPECT_EQ(naive_keys.size(), 3u);
  EXPECT_EQ(hazard_keys(s, ExhaustiveOptions{}), naive_keys);
}

std::uint64_t catalan(std::uint64_t n) { return factorial(2 * n) / (factorial(n + 1) * factorial(n)); }
std::uint64_t power_of_two(std::uint64_t n) { return std::uint64_t{1} << n; }

/// Explores `s` naively and reduced; checks the naive count and the class count against their
/// closed forms, and that the reduced search explores each class of the naive one exactly once.
void expect_counts(const Scenario& s, std::uint64_t interleavings, std::uint64_t classes) {
  const Exploration all = explore_all(s, naive());
  EXPECT_EQ(all.stats.explored, interleavings) << s.name << ": naive interleavings";
  EXPECT_EQ(all.classes.size(), classes) << s.name << ": equivalence classes among the naive runs";
  const Exploration reduced = explore_all(s, ExhaustiveOptions{});
  EXPECT_EQ(reduced.stats.explored, classes) << s.name << ": one schedule per class";
  EXPECT_EQ(reduced.classes, all.classes) << s.name << ": every class covered";
  EXPECT_TRUE(reduced.stats.complete);
}

TEST(Exhaustive, independent_single_kernel_ranks_form_one_class) {
  for (std::uint64_t k : {1u, 2u, 3u, 4u}) expect_counts(testing::single_kernels(static_cast<std::uint32_t>(k)), factorial(2 * k) / power_of_two(k), 1);
}

TEST(Exhaustive, issues_at_a_streams_tail_commute_with_executes_at_its_head) {
  for (std::uint64_t n : {1u, 2u, 3u, 5u, 7u}) expect_counts(testing::stream_of_kernels(static_cast<std::uint32_t>(n)), catalan(n), 1);
}

TEST(Exhaustive, joins_of_one_collective_by_different_members_commute) {
  for (std::uint64_t m : {2u, 3u, 4u}) expect_counts(testing::one_collective(static_cast<std::uint32_t>(m)), factorial(2 * m) / power_of_two(m), 1);
}

TEST(Exhaustive, classes_of_independent_ranks_multiply) {
  for (std::uint64_t k : {1u, 2u, 3u, 4u}) expect_counts(testing::ranks_with_racing_signals(static_cast<std::uint32_t>(k)), factorial(2 * k), power_of_two(k));
}

TEST(Exhaustive, conflicting_threads_are_not_reduced) {
  // 2 threads x 3 signals on one flag: every step conflicts, C(6,3) = 20 classes.
  const Exploration reduced = explore_all(signalling_threads(2, 2, 3), ExhaustiveOptions{});
  EXPECT_EQ(reduced.stats.explored, 20u);
  EXPECT_EQ(reduced.classes.size(), 20u);
}

TEST(Exhaustive, a_cap_stops_the_search_and_reports_it_incomplete) {
  ExhaustiveOptions options = naive();
  options.max_schedules = 5;
  const Exploration e = explore_all(independent_syncs(2, 3), options);
  EXPECT_EQ(e.stats.explored, 5u);
  EXPECT_TRUE(e.stats.capped);
  EXPECT_FALSE(e.stats.complete);
}

TEST(Exhaustive, a_preemption_bound_of_zero_runs_each_thread_to_completion) {
  ExhaustiveOptions options = naive();
  options.preemption_bound = 0;
  // Host-blocking syncs on idle streams never block, so with no preemptions each rank's thread
  // runs to its end once started: one schedule per order of the ranks.
  const Exploration e = explore_all(independent_syncs(3, 2), options);
  EXPECT_EQ(e.stats.explored, 6u);
  EXPECT_GT(e.stats.bound_skipped, 0u);
  EXPECT_FALSE(e.stats.complete);
}

}  // namespace
}  // namespace amaxcheck::sched
