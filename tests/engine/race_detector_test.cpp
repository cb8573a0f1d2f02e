// The race detector's history, interleaving by interleaving: which earlier accesses a new one
// drops, and that a detector reset between runs (as a Runner reuses it) reports what a new one
// does. Its rows are reused run after run, and a read meeting a read skips the clocks.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "detectors/race_detector.h"
#include "engine/engine.h"
#include "model/builder.h"

namespace amaxcheck {
namespace {

/// Rank 0 reads x on stream a twice (the second read covers the first), reads all of x on
/// stream b, then writes one element of x on b. Nothing orders a with b.
Scenario reads_then_a_write_on_another_stream() {
  ScenarioBuilder b("reads_then_write");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId a = b.stream(r, "a"), s_b = b.stream(r, "b");
  const BufferId x = b.buffer(r, "x", 8), y = b.buffer(r, "y", 8), z = b.buffer(r, "z", 8);
  b.op(r, t, ScenarioBuilder::copy(a, {x, 0, 4}, {y, 0, 4}, "read_low"));
  b.op(r, t, ScenarioBuilder::copy(s_b, {x, 0, 8}, {z, 0, 8}, "read_other"));
  b.op(r, t, ScenarioBuilder::copy(a, {x, 0, 8}, {y, 0, 8}, "read_all"));
  b.op(r, t, ScenarioBuilder::fill(s_b, {x, 2, 1}, {1.0f}, "write_mid"));
  return b.build();
}

/// Runs the schedule `path` (indices into enabled()) to its end with `detector` attached.
void run_path(const Scenario& s, const std::vector<std::size_t>& path, Detector& detector) {
  Engine engine(s);
  engine.add_observer(&detector);
  for (std::size_t choice : path) engine.apply(engine.enabled().at(choice));
  engine.finish();
}

/// Calls `visit` with every complete schedule of `s`.
void each_schedule(const Scenario& s, const std::function<void(const std::vector<std::size_t>&)>& visit) {
  std::vector<std::size_t> path;
  std::function<void()> dfs = [&] {
    Engine engine(s);
    for (std::size_t choice : path) engine.apply(engine.enabled().at(choice));
    const std::size_t width = engine.enabled().size();
    if (width == 0) return visit(path);
    for (std::size_t i = 0; i < width; ++i) {
      path.push_back(i);
      dfs();
      path.pop_back();
    }
  };
  dfs();
}

std::string described(const std::vector<Hazard>& hazards) {
  std::string text;
  for (const Hazard& h : hazards) {
    text += h.summary + "\n";
    for (const Participant& p : h.participants) text += "  " + p.op_name + " " + p.lane + " " + std::to_string(p.step) + "\n";
  }
  return text;
}

std::string race(const char* kind, const char* earlier, const char* earlier_lane, const char* later, const char* later_lane) {
  return std::string(kind) + " race on rank 0 buffer x[2..3) between " + earlier + " (stream " + earlier_lane + ") and " + later +
         " (stream " + later_lane + "), with no happens-before\n";
}

/// Each of two ranks fills x on stream a and all-reduces x in place on stream b, unordered.
Scenario fill_racing_an_in_place_all_reduce() {
  ScenarioBuilder b("fill_vs_in_place");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId dp = b.comm("dp", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId a = b.stream(r, "a"), s_b = b.stream(r, "b");
    const BufferId x = b.buffer(r, "x", 4);
    b.op(r, t, ScenarioBuilder::fill(a, {x, 0, 4}, {1.0f, 2.0f, 3.0f, 4.0f}, "fill_x"));
    b.op(r, t, ScenarioBuilder::all_reduce(s_b, dp, {x, 0, 4}, {x, 0, 4}, "reduce_x"));
  }
  return b.build();
}

// An op that reads and writes the same range is one write access of it (the detector's per-op
// table folds the read away): whichever runs first, the race is a WAW, never a RAW.
TEST(RaceDetector, an_in_place_all_reduce_is_one_write_of_its_range) {
  const Scenario s = fill_racing_an_in_place_all_reduce();
  std::size_t schedules = 0;
  each_schedule(s, [&](const std::vector<std::size_t>& path) {
    RaceDetector detector(s);
    run_path(s, path, detector);
    ++schedules;
    ASSERT_EQ(detector.hazards().size(), 2u) << described(detector.hazards());
    for (const Hazard& h : detector.hazards()) EXPECT_EQ(h.summary.rfind("WAW race on rank ", 0), 0u) << h.summary;
  });
  EXPECT_GT(schedules, 1u);
}

// The write meets read_low only while read_all has not run: once it has, read_all (same stream,
// covering) dropped read_low from the history. read_other, on the write's own stream, is ordered
// before it, and being another stream's read it must not drop read_low.
TEST(RaceDetector, a_read_drops_only_its_own_streams_earlier_reads_that_it_covers) {
  const Scenario s = reads_then_a_write_on_another_stream();
  std::set<std::string> outcomes;
  std::size_t schedules = 0;
  each_schedule(s, [&](const std::vector<std::size_t>& path) {
    RaceDetector detector(s);
    run_path(s, path, detector);
    std::string summaries;
    for (const Hazard& h : detector.hazards()) summaries += h.summary + "\n";
    outcomes.insert(summaries);
    ++schedules;
  });
  const std::set<std::string> expected = {
      race("WAR", "read_all", "a", "write_mid", "b"),
      race("WAR", "read_low", "a", "write_mid", "b") + race("RAW", "write_mid", "b", "read_all", "a"),
      race("RAW", "write_mid", "b", "read_low", "a") + race("RAW", "write_mid", "b", "read_all", "a"),
  };
  EXPECT_EQ(outcomes, expected);
  EXPECT_GT(schedules, 10u);
}

/// Per schedule of `s`, the races reported, each as the pair of its ops' names.
std::vector<std::set<std::set<std::string>>> races_per_schedule(const Scenario& s) {
  std::vector<std::set<std::set<std::string>>> out;
  each_schedule(s, [&](const std::vector<std::size_t>& path) {
    RaceDetector detector(s);
    run_path(s, path, detector);
    auto& pairs = out.emplace_back();
    for (const Hazard& h : detector.hazards()) pairs.insert({h.participants[0].op_name, h.participants[1].op_name});
  });
  return out;
}

// The same rule where the covering read stays in the history (it may race with the write, on a
// third stream): read_all on b covers read_low on a, and the write on c is ordered after
// read_all (an event) but never after read_low. Had read_all dropped read_low, the schedules
// that run read_low first would report nothing.
TEST(RaceDetector, a_read_on_another_stream_never_drops_a_read_it_covers) {
  ScenarioBuilder b("covering_read_on_another_stream");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId a = b.stream(r, "a"), s_b = b.stream(r, "b"), c = b.stream(r, "c");
  const EventId read = b.event(r, "read_all_done");
  const BufferId x = b.buffer(r, "x", 8), y = b.buffer(r, "y", 8), z = b.buffer(r, "z", 8);
  b.op(r, t, ScenarioBuilder::copy(a, {x, 0, 4}, {y, 0, 4}, "read_low"));
  b.op(r, t, ScenarioBuilder::copy(s_b, {x, 0, 8}, {z, 0, 8}, "read_all"));
  b.op(r, t, ScenarioBuilder::record(s_b, read));
  b.op(r, t, ScenarioBuilder::wait(c, read));
  b.op(r, t, ScenarioBuilder::fill(c, {x, 2, 1}, {1.0f}, "write_mid"));
  const auto schedules = races_per_schedule(b.build());
  EXPECT_GT(schedules.size(), 10u);
  for (const auto& races : schedules) EXPECT_EQ(races, (std::set<std::set<std::string>>{{"read_low", "write_mid"}}));
}

// Ranges at their edges: a kernel that reads x[0..4) and writes x[0..1) still reads x[3], and a
// copy from x[0..2) to x[1..3) still reads x[0]; a fill of that element on another stream races
// with each in every schedule. Folding a read into a write that only overlaps it, or an
// off-by-one containment test, drops those reads.
TEST(RaceDetector, a_read_that_its_own_op_writes_only_in_part_still_races) {
  for (const bool amax : {true, false}) {
    ScenarioBuilder b("partly_overwritten_read");
    const RankId r = b.rank();
    const ThreadId t = b.thread(r, "main");
    const StreamId a = b.stream(r, "a"), s_b = b.stream(r, "b");
    const BufferId x = b.buffer(r, "x", 4);
    Op reader = ScenarioBuilder::copy(a, {x, 0, 2}, {x, 1, 2}, "shift");
    if (amax) {
      reader = ScenarioBuilder::copy(a, {x, 0, 4}, {x, 0, 1}, "local_amax");
      reader.kind = OpKind::local_amax;
    }
    b.op(r, t, reader);
    b.op(r, t, ScenarioBuilder::fill(s_b, {x, amax ? 3U : 0U, 1}, {1.0f}, "fill"));
    const auto schedules = races_per_schedule(b.build());
    EXPECT_GT(schedules.size(), 1u);
    for (const auto& races : schedules) EXPECT_EQ(races, (std::set<std::set<std::string>>{{reader.name, "fill"}})) << reader.name;
  }
}

// A write on b that covers a's write races with it, and a read on c ordered after b's write (an
// event) but not after a's still races with a's write: the covering write may drop only the
// accesses it is ordered after.
TEST(RaceDetector, a_covering_write_keeps_the_accesses_it_races_with) {
  ScenarioBuilder b("covering_unordered_write");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId a = b.stream(r, "a"), s_b = b.stream(r, "b"), c = b.stream(r, "c");
  const EventId written = b.event(r, "written");
  const BufferId x = b.buffer(r, "x", 4), y = b.buffer(r, "y", 4);
  b.op(r, t, ScenarioBuilder::fill(a, {x, 1, 1}, {1.0f}, "write_a"));
  b.op(r, t, ScenarioBuilder::fill(s_b, {x, 0, 4}, {2.0f, 2.0f, 2.0f, 2.0f}, "write_b"));
  b.op(r, t, ScenarioBuilder::record(s_b, written));
  b.op(r, t, ScenarioBuilder::wait(c, written));
  b.op(r, t, ScenarioBuilder::copy(c, {x, 1, 1}, {y, 0, 1}, "read_c"));
  const auto schedules = races_per_schedule(b.build());
  EXPECT_GT(schedules.size(), 10u);
  // In every schedule the read meets write_a (before or after it), whichever order a and b ran in.
  for (const auto& races : schedules) {
    EXPECT_TRUE(races.contains({"write_a", "read_c"})) << races.size() << " races, none between write_a and read_c";
  }
}

// One detector, reset before each schedule, against a new one per schedule: the reused rows and
// sites must hold nothing of earlier runs.
TEST(RaceDetector, a_reset_detector_reports_what_a_new_one_reports_in_every_schedule) {
  const Scenario s = reads_then_a_write_on_another_stream();
  RaceDetector reused(s);
  std::size_t schedules = 0;
  each_schedule(s, [&](const std::vector<std::size_t>& path) {
    RaceDetector fresh(s);
    run_path(s, path, fresh);
    reused.reset();
    run_path(s, path, reused);
    EXPECT_EQ(described(reused.hazards()), described(fresh.hazards())) << "schedule " << schedules;
    ++schedules;
  });
  EXPECT_GT(schedules, 10u);
}

}  // namespace
}  // namespace amaxcheck
