// `amaxcheck check` and `replay` report honest verdicts with their exit codes: 0 proven clean
// or no hazard found, 1 hazard, 4 inconclusive (a step cap, the schedule cap or the time
// budget cut the check short), for every strategy; stdout does not depend on progress.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "io/scenario_json.h"
#include "run_cli.h"
#include "scenarios.h"
#include "scheduler/random_strategy.h"
#include "scheduler/run.h"
#include "trace/trace.h"

namespace amaxcheck::cli {
namespace {

/// A small clean protocol point and its hazardous twin.
const std::vector<std::string> clean_target = {"te-sync", "--dp", "2", "--modules", "1", "--iters", "1"};

/// A scenario file small enough for the exhaustive search to complete: seed hazard 1's
/// miniature with the wait before the copy-back.
std::string tiny_clean_file() {
  const std::string path = temp_path("wait_before_copy.json");
  save_scenario_file(sched::testing::wait_after_copy(2, false), path);
  return path;
}
/// A clean scenario file with many equivalence classes: `threads` host threads signalling one
/// flag `signals` times each, every signal conflicting with the others' (the protocol points
/// above have a single class each, so they cannot show a cut search).
std::string signalling_file(std::uint32_t threads, std::uint32_t signals) {
  const std::string path = temp_path("signalling_" + std::to_string(threads) + "x" + std::to_string(signals) + ".json");
  save_scenario_file(sched::testing::signalling_threads(threads, threads, signals), path);
  return path;
}
const std::vector<std::string> racy_target = {"te-async", "--wait", "after-copy", "--dp", "2", "--modules", "1",
                                              "--iters", "1"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const char* const strategies[] = {"random", "pct", "exhaustive", "timed"};

TEST(CheckCli, a_step_cap_that_cuts_runs_is_inconclusive_exit_4_for_every_strategy) {
  for (const char* strategy : strategies) {
    const Ran r = amaxcheck(with(with({"check"}, clean_target), {"--strategy", strategy, "--runs", "5", "--max-steps", "4"}));
    EXPECT_EQ(r.code, exit_inconclusive) << strategy << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("verdict: inconclusive"), std::string::npos) << strategy << "\n" << r.out;
    EXPECT_NE(r.out.find("step cap of 4 steps (raise it with --max-steps)"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("timing:"), std::string::npos) << strategy << ": a cut-off run has no cost figures\n" << r.out;
  }
}

TEST(CheckCli, json_carries_the_verdict_kind_and_what_cut_it_short) {
  for (const char* strategy : strategies) {
    const Ran r = amaxcheck(
        with(with({"check"}, clean_target), {"--strategy", strategy, "--runs", "5", "--max-steps", "4", "--json"}));
    ASSERT_EQ(r.code, exit_inconclusive) << strategy << r.out << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["verdict"], "inconclusive") << strategy;
    ASSERT_EQ(j["cut_short"].size(), 1u) << strategy;
    EXPECT_EQ(j.at("cut_short").at(0).at("cause"), "step_cap");
    EXPECT_EQ(j.at("cut_short").at(0).at("limit"), 4);
    EXPECT_EQ(j.at("cut_short").at(0).at("raise_with"), "--max-steps");
    EXPECT_FALSE(j.contains("timing")) << strategy << ": a cut-off timed run has no cost figures";
  }
}

TEST(CheckCli, a_timed_run_that_hangs_has_no_cost_figures) {
  // A rank-dependent launch order on the shared communicator deadlocks in every schedule.
  const std::vector<std::string> hung = {"check", "te-async", "--dp", "2", "--modules", "1", "--iters", "1", "--comm",
                                         "shared", "--amax-order", "rank-dependent", "--strategy", "timed"};
  const Ran text = amaxcheck(hung);
  ASSERT_EQ(text.code, exit_hazard) << text.out << text.err;
  EXPECT_NE(text.out.find("timing: none: the timed run got stuck"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("timing: iteration"), std::string::npos) << text.out;
  const Ran json = amaxcheck(with(hung, {"--json"}));
  ASSERT_EQ(json.code, exit_hazard) << json.out << json.err;
  EXPECT_FALSE(nlohmann::json::parse(json.out).contains("timing")) << json.out;
}

TEST(CheckCli, the_schedule_cap_is_inconclusive_exit_4) {
  // Two threads signalling one flag twice: C(4, 2) = 6 classes, so one schedule cannot cover them.
  const Ran r = amaxcheck({"check", signalling_file(2, 2), "--strategy", "exhaustive", "--max-schedules", "1"});
  EXPECT_EQ(r.code, exit_inconclusive) << r.out << r.err;
  EXPECT_NE(r.out.find("schedule cap of 1 (raise it with --max-schedules"), std::string::npos) << r.out;
}

TEST(CheckCli, a_preemption_bound_that_skipped_a_branch_is_inconclusive_exit_4_and_says_so) {
  // The 6 classes of two threads signalling one flag twice need a preemption: bound 0 skips some.
  const std::string file = signalling_file(2, 2);
  const Ran r = amaxcheck({"check", file, "--strategy", "exhaustive", "--preemption-bound", "0"});
  EXPECT_EQ(r.code, exit_inconclusive) << r.out << r.err;
  EXPECT_NE(r.out.find("cut short: the preemption bound of 0 skipped "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(raise it with --preemption-bound; -1 = none)"), std::string::npos) << r.out;
  const Ran json = amaxcheck({"check", file, "--strategy", "exhaustive", "--preemption-bound", "0", "--json"});
  ASSERT_EQ(json.code, exit_inconclusive) << json.out << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j.at("cut_short").size(), 1u) << json.out;
  EXPECT_EQ(j.at("cut_short").at(0).at("cause"), "preemption_bound");
  EXPECT_EQ(j.at("cut_short").at(0).at("limit"), 0);
  EXPECT_GT(j.at("cut_short").at(0).at("skipped").get<int>(), 0);
  EXPECT_EQ(j.at("cut_short").at(0).at("raise_with"), "--preemption-bound");
  // A bound that skipped nothing proves, and the proof says which bound it held under.
  const Ran wide = amaxcheck({"check", file, "--strategy", "exhaustive", "--preemption-bound", "9"});
  EXPECT_EQ(wide.code, exit_clean) << wide.out << wide.err;
  EXPECT_NE(wide.out.find("6 schedules explored, preemption bound 9 (it skipped no branch)"), std::string::npos) << wide.out;
  EXPECT_EQ(wide.out.find("cut short"), std::string::npos) << wide.out;
}

TEST(CheckCli, a_spent_time_budget_is_inconclusive_exit_4_for_every_strategy) {
  // Big enough (te-async at 64 ranks) that a timed run meets the in-run clock check.
  const std::vector<std::string> big = {"te-async", "--dp", "64", "--modules", "2", "--iters", "1"};
  for (const char* strategy : strategies) {
    const Ran r = amaxcheck(with(with({"check"}, big), {"--strategy", strategy, "--runs", "5", "--time-budget", "1e-9"}));
    EXPECT_EQ(r.code, exit_inconclusive) << strategy << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("time budget of 1e-09 s ran out"), std::string::npos) << strategy << "\n" << r.out;
    EXPECT_EQ(r.out.find("timing:"), std::string::npos) << strategy;
  }
}

TEST(CheckCli, an_exhaustive_search_with_runs_cut_at_the_step_cap_is_not_complete) {
  // Three threads signalling a flag twice each: 90 classes of 6 steps. Capped at 5 steps, the
  // search still visits every branch, but no run reaches a schedule's end.
  const Ran r = amaxcheck({"check", signalling_file(3, 2), "--strategy", "exhaustive", "--max-steps", "5", "--json"});
  ASSERT_EQ(r.code, exit_inconclusive) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "inconclusive");
  EXPECT_EQ(j["complete"], false) << r.out;
  EXPECT_EQ(j["runs"], 90) << "every branch visited";
  const Ran text = amaxcheck({"check", signalling_file(3, 2), "--strategy", "exhaustive", "--max-steps", "5"});
  EXPECT_NE(text.out.find("search incomplete"), std::string::npos) << text.out;
}

TEST(CheckCli, zero_runs_are_bad_input_not_a_clean_verdict) {
  // Zero runs of a racy design once said "no hazard found after 0 run(s)", exit 0.
  for (const char* strategy : {"random", "pct", "exhaustive"}) {
    const Ran r = amaxcheck(with(with({"check"}, racy_target), {"--strategy", strategy, "--runs", "0"}));
    EXPECT_EQ(r.code, exit_bad_input) << strategy << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("--runs: expected at least 1"), std::string::npos) << r.err;
  }
}

TEST(CheckCli, a_time_budget_that_is_not_a_number_is_bad_input) {
  const Ran r = amaxcheck(with(with({"check"}, clean_target), {"--runs", "3", "--time-budget", "nan"}));
  EXPECT_EQ(r.code, exit_bad_input) << r.out << r.err;
  EXPECT_NE(r.err.find("--time-budget: expected seconds >= 0"), std::string::npos) << r.err;
}

TEST(CheckCli, a_time_budget_beyond_the_clock_is_no_deadline) {
  // Converted to the clock's nanoseconds, 1e10 s overflowed into a deadline already past.
  for (const char* budget : {"1e10", "1e300", "inf"}) {
    const Ran r = amaxcheck(with(with({"check"}, clean_target), {"--runs", "3", "--time-budget", budget}));
    EXPECT_EQ(r.code, exit_clean) << budget << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("no hazard found after 3 run(s)"), std::string::npos) << budget << "\n" << r.out;
  }
}

TEST(CheckCli, a_pct_depth_of_zero_is_bad_input) {
  const Ran r = amaxcheck(with(with({"check"}, clean_target), {"--strategy", "pct", "--depth", "0"}));
  EXPECT_EQ(r.code, exit_bad_input) << r.out << r.err;
  EXPECT_NE(r.err.find("--depth: expected 1 to"), std::string::npos) << r.err;
}

TEST(CheckCli, a_complete_exhaustive_search_of_a_clean_point_is_proven_clean_exit_0) {
  const Ran r = amaxcheck({"check", tiny_clean_file(), "--strategy", "exhaustive", "--time-budget", "600"});
  EXPECT_EQ(r.code, exit_clean) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: proven clean"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("proven: every schedule of the scenario as given, up to equivalence"), std::string::npos)
      << r.out;
}

TEST(CheckCli, sampled_checks_say_no_hazard_found_with_the_run_count_exit_0) {
  const Ran r = amaxcheck(with(with({"check"}, clean_target), {"--strategy", "pct", "--runs", "7"}));
  EXPECT_EQ(r.code, exit_clean) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: no hazard found after 7 run(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sampled: 7 pct run(s), not a proof"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "") << "a check of a few milliseconds prints no progress";
}

TEST(CheckCli, a_hazard_is_exit_1_for_every_strategy_even_when_the_search_stops_early) {
  for (const char* strategy : {"random", "pct", "exhaustive"}) {
    const Ran r = amaxcheck(with(with({"check"}, racy_target),
                                 {"--strategy", strategy, "--runs", "200", "--trace-out", temp_path("race.jsonl")}));
    EXPECT_EQ(r.code, exit_hazard) << strategy << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("verdict: HAZARD"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("incomplete (capped or bounded)"), std::string::npos) << r.out;
    if (std::string(strategy) == "exhaustive") {
      // Not "search complete": the schedules after the hazard's were never tried.
      EXPECT_NE(r.out.find(", search stopped at the first hazard (--keep-going continues)"), std::string::npos) << r.out;
    }
  }
}

TEST(CheckCli, one_rank_comms_checks_the_program_with_every_communicator_cut_to_one_rank) {
  // Rank 0 all-reduces on a two-rank communicator that rank 1 never calls: as written, a
  // collective its members never all join. Cut to one-rank communicators (the program a GPU run
  // executes when the two share a GPU), rank 0's all-reduce is its own and completes.
  ScenarioBuilder b("lonely_all_reduce");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId world = b.comm("world", {r0, r1});
  const StreamId s = b.stream(r0, "s");
  const ThreadId t = b.thread(r0, "main");
  b.thread(r1, "main");
  const BufferId x = b.buffer(r0, "x", 1, {1.0f});
  b.op(r0, t, ScenarioBuilder::all_reduce(s, world, {x, 0, 1}, {x, 0, 1}, "ar"));
  const std::string path = temp_path("lonely_all_reduce.json");
  save_scenario_file(b.build(), path);
  const Ran as_written = amaxcheck({"check", path, "--runs", "3", "--trace-out", temp_path("lonely.jsonl"), "--json"});
  ASSERT_EQ(as_written.code, exit_hazard) << as_written.out << as_written.err;
  EXPECT_EQ(nlohmann::json::parse(as_written.out)["hazards"][0]["kind"], "unjoined_collective") << as_written.out;
  const Ran split = amaxcheck({"check", path, "--runs", "3", "--one-rank-comms", "--json"});
  ASSERT_EQ(split.code, exit_clean) << split.out << split.err;
  EXPECT_EQ(nlohmann::json::parse(split.out)["scenario"], "lonely_all_reduce (1-rank communicators)");
}

TEST(CheckCli, the_replay_command_of_a_trace_path_the_shell_would_split_is_quoted) {
  const std::filesystem::path dir = temp_path("dir with space");
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "it's;here.jsonl").string();
  const Ran r = amaxcheck(with(with({"check"}, racy_target), {"--trace-out", trace}));
  ASSERT_EQ(r.code, exit_hazard) << r.out << r.err;
  const std::string quoted = "amaxcheck replay '" + (dir / "it'\\''s;here.jsonl").string() + "'";
  EXPECT_NE(r.out.find(quoted), std::string::npos) << quoted << "\n" << r.out;
  // What a shell makes of the quoted word is the path itself.
  const std::string echoed = temp_path("echoed_path");
  const std::string command = "printf %s " + quoted.substr(std::string("amaxcheck replay ").size()) + " > " + echoed;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(echoed);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), trace);
  // A plain path stays as it is.
  const Ran plain = amaxcheck(with(with({"check"}, racy_target), {"--trace-out", temp_path("plain.jsonl")}));
  EXPECT_NE(plain.out.find("amaxcheck replay " + temp_path("plain.jsonl") + "\n"), std::string::npos) << plain.out;
}

/// One thread issues two fills of x, 1 on stream a and then 2 on stream b; the check wants 2.
/// Every schedule races; only those that run the second fill first leave 1, a value_mismatch,
/// and the exhaustive search's first schedule is not one of them.
std::string racing_fills_file() {
  ScenarioBuilder b("racing_fills");
  const RankId r = b.rank();
  const StreamId a = b.stream(r, "a"), second = b.stream(r, "b");
  const ThreadId t = b.thread(r, "main");
  const BufferId x = b.buffer(r, "x", 1);
  b.op(r, t, ScenarioBuilder::fill(a, {x, 0, 1}, {1.0f}, "fill_1"));
  b.op(r, t, ScenarioBuilder::fill(second, {x, 0, 1}, {2.0f}, "fill_2"));
  b.scenario().checks.push_back(ReplicaCheck{"x", {{r, {x, 0, 1}}}, {2.0f}});
  const std::string path = temp_path("racing_fills.json");
  save_scenario_file(b.build(), path);
  return path;
}

TEST(CheckCli, with_keep_going_every_hazard_names_a_trace_that_shows_it) {
  // Once every hazard named the first failing run's trace, which need not show it.
  for (const char* strategy : {"random", "pct", "exhaustive"}) {
    const std::string trace = temp_path(std::string("keep_going_") + strategy + ".jsonl");
    const Ran r = amaxcheck({"check", racing_fills_file(), "--strategy", strategy, "--runs", "50", "--keep-going",
                             "--trace-out", trace, "--json", "--quiet"});
    ASSERT_EQ(r.code, exit_hazard) << strategy << "\n" << r.out << r.err;
    const auto j = nlohmann::json::parse(r.out);
    std::set<std::string> kinds, traces;
    for (const auto& hazard : j["hazards"]) {
      kinds.insert(hazard["kind"]);
      const std::string replay = hazard["replay"];
      ASSERT_EQ(replay.rfind("amaxcheck replay ", 0), 0u) << replay;
      const std::string path = replay.substr(std::string("amaxcheck replay ").size());
      traces.insert(path);
      const Ran again = amaxcheck({"replay", path, "--json"});
      ASSERT_EQ(again.code, exit_hazard) << path << "\n" << again.err;
      // The same hazard: kind, summary, and each participant's rank, lane and step.
      const auto places = [](const nlohmann::json& h) {
        std::vector<std::tuple<int, std::string, int>> out;
        for (const auto& p : h["participants"]) out.emplace_back(p["rank"], p["lane"], p["step"]);
        return out;
      };
      bool shown = false;
      const auto replayed = nlohmann::json::parse(again.out);
      for (const auto& h : replayed["hazards"]) {
        shown |= h["kind"] == hazard["kind"] && h["summary"] == hazard["summary"] && places(h) == places(hazard);
      }
      EXPECT_TRUE(shown) << strategy << ": " << path << " does not show " << hazard["summary"];
    }
    EXPECT_EQ(kinds, (std::set<std::string>{"data_race", "value_mismatch"})) << strategy;
    if (std::string(strategy) == "exhaustive") {
      EXPECT_GE(traces.size(), 2u) << "the mismatch is a later schedule's";
    }
  }
}

TEST(CheckCli, with_keep_going_the_text_report_replays_each_kind_from_a_trace_that_shows_it) {
  // The exhaustive search shows the race first and the mismatch in a later schedule, so the
  // two kinds' replay lines name two traces.
  const std::string trace = temp_path("keep_going_text.jsonl");
  const Ran r = amaxcheck({"check", racing_fills_file(), "--strategy", "exhaustive", "--keep-going", "--trace-out", trace,
                           "--quiet"});
  ASSERT_EQ(r.code, exit_hazard) << r.out << r.err;
  std::map<std::string, std::string> replay_of_kind;  // each kind's block: "  kind: ..." up to its "    replay: ..."
  std::string kind;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    for (const char* k : {"data_race", "value_mismatch"}) {
      if (line.rfind(std::string("  ") + k + ": ", 0) == 0) kind = k;
    }
    const std::string replay = "    replay: amaxcheck replay ";
    if (!kind.empty() && line.rfind(replay, 0) == 0) {
      replay_of_kind[kind] = line.substr(replay.size());
      kind.clear();
    }
  }
  ASSERT_EQ(replay_of_kind.size(), 2u) << r.out;
  EXPECT_NE(replay_of_kind["data_race"], replay_of_kind["value_mismatch"]) << r.out;
  for (const auto& [shown_kind, path] : replay_of_kind) {
    const Ran again = amaxcheck({"replay", path, "--json"});
    ASSERT_EQ(again.code, exit_hazard) << path << "\n" << again.err;
    bool shown = false;
    const auto replayed = nlohmann::json::parse(again.out);
    for (const auto& h : replayed["hazards"]) shown |= h["kind"] == shown_kind;
    EXPECT_TRUE(shown) << path << " does not show a " << shown_kind << "\n" << r.out;
  }
}

TEST(CheckCli, progress_goes_to_stderr_after_a_second_and_leaves_stdout_alone) {
  // An exhaustive search that cannot finish in 1.5 s (5 threads x 3 conflicting signals:
  // 15! / 3!^5 = 168M classes): one progress line, then the budget ends it.
  const auto args = std::vector<std::string>{"check", signalling_file(5, 3), "--strategy", "exhaustive", "--json",
                                             "--time-budget", "1.5"};
  const Ran loud = amaxcheck(args);
  EXPECT_EQ(loud.code, exit_inconclusive) << loud.out << loud.err;
  EXPECT_NE(loud.err.find("progress: "), std::string::npos) << loud.err;
  EXPECT_NE(loud.err.find(" schedules, "), std::string::npos) << loud.err;
  const Ran quiet = amaxcheck(with(args, {"--quiet"}));
  EXPECT_EQ(quiet.err, "");
  const auto j = nlohmann::json::parse(loud.out);
  EXPECT_EQ(j["verdict"], "inconclusive");
  EXPECT_EQ(j.at("cut_short").at(0).at("cause"), "time_budget");
}

TEST(CheckCli, help_lists_the_exit_codes) {
  const Ran r = amaxcheck({"check", "--help"});
  EXPECT_NE(r.out.find("4 inconclusive"), std::string::npos) << r.out;
}

TEST(ReplayCli, a_trace_cut_at_its_step_cap_without_a_hazard_replays_inconclusive_exit_4) {
  const Scenario s = sched::testing::wait_after_copy(2, false);
  sched::RandomStrategy strategy(3);
  sched::RunOptions options;
  options.max_steps = 5;
  const sched::RunResult run = sched::run_once(s, strategy, options);
  ASSERT_EQ(run.outcome, sched::RunOutcome::step_limit);
  const std::string path = temp_path("capped.jsonl");
  sched::write_trace_file(path, sched::make_trace(s, run, sched::TraceOrigin{"random", 3, 0, {}}));
  const Ran r = amaxcheck({"replay", path});
  EXPECT_EQ(r.code, exit_inconclusive) << r.out << r.err;
  EXPECT_NE(r.out.find("inconclusive"), std::string::npos) << r.out;
}

TEST(ReplayCli, check_determinism_holds_the_replays_to_the_file_byte_for_byte) {
  const Scenario s = sched::testing::wait_after_copy(2);
  sched::RandomStrategy strategy(1);
  const sched::RunResult run = sched::run_once(s, strategy);
  const std::string path = temp_path("determinism.jsonl");
  sched::write_trace_file(path, sched::make_trace(s, run, sched::TraceOrigin{"random", 1, 0, {}}));
  const int verdict = run.has_hazard() ? exit_hazard : exit_clean;
  const Ran same = amaxcheck({"replay", path, "--check-determinism"});
  EXPECT_EQ(same.code, verdict) << same.out << same.err;
  EXPECT_NE(same.out.find("deterministic: two replays wrote traces byte-identical to the file"), std::string::npos) << same.out;
  // The same records spaced otherwise: every step still replays, but the file is not what a
  // replay writes, so the check cannot say the replays reproduce it.
  std::ifstream in(path);
  std::string spaced;
  for (std::string line; std::getline(in, line);) spaced += "{ " + line.substr(1) + "\n";
  const std::string respaced = temp_path("determinism_respaced.jsonl");
  std::ofstream(respaced) << spaced;
  const Ran plain = amaxcheck({"replay", respaced});
  ASSERT_EQ(plain.code, verdict) << "the records still replay\n" << plain.out << plain.err;
  const Ran other = amaxcheck({"replay", respaced, "--check-determinism"});
  EXPECT_EQ(other.code, exit_bad_input) << other.out << other.err;
  EXPECT_NE(other.out.find("the replay is deterministic but differs from the file"), std::string::npos) << other.out;
}

TEST(ShrinkCli, a_shrink_cut_short_by_max_tests_says_so_on_screen_and_in_its_trace) {
  const std::string trace = temp_path("shrink_budget.jsonl");
  const Ran check = amaxcheck({"check", "te-async", "--wait", "after-copy", "--dp", "4", "--modules", "1", "--iters", "1",
                               "--trace-out", trace, "--quiet"});
  ASSERT_EQ(check.code, exit_hazard) << check.out << check.err;
  for (const auto& [max_tests, cut] : {std::pair{"3", true}, std::pair{"20000", false}}) {
    const std::string shrunk = temp_path(std::string("shrink_budget_") + max_tests + ".jsonl");
    const Ran r = amaxcheck({"shrink", trace, "-o", shrunk, "--max-tests", max_tests});
    ASSERT_EQ(r.code, exit_clean) << r.out << r.err;
    EXPECT_EQ(r.out.find(", budget exhausted)") != std::string::npos, cut) << r.out;
    EXPECT_EQ(sched::read_trace_file(shrunk).header.parameters["budget_exhausted"], cut) << max_tests;
  }
}

}  // namespace
}  // namespace amaxcheck::cli
