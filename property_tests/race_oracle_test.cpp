// The race detector against a naive oracle that keeps every access of a run with a copy of its
// clock and compares every pair: two accesses to one rank's buffer that share an element, at
// least one a write, of different ops, the later one's clock not covering the earlier one.
//
// The detector keeps short histories (an access ordered before a covering write is dropped, a
// read drops its own actor's reads it covers), so it reports a subset of the racing pairs: each
// race whose earlier access was dropped is also a race of the later access with an access that
// is still there. What it must report, then, is exactly the oracle's set of later ops, and only
// pairs the oracle has. The generated programs run three streams of one rank over two small
// buffers with ranges that overlap in part (a kernel may read a range it partly writes), events
// between the streams, and host synchronization, so that a wrong drop or a wrong range test
// leaves some later op unreported.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "detectors/race_detector.h"
#include "engine/engine.h"
#include "model/builder.h"

namespace amaxcheck::props {
namespace {

constexpr std::uint32_t kBufferSize = 4;
constexpr StreamId kStreams = 3;

/// A whole number in [lo, hi), uniform at every test size: the patterns that matter need several
/// ops over several streams from the first case on.
template <typename T>
T uniform(T lo, T hi) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(lo, hi));
}

/// A range of buffer `buffer`, anywhere in it; rarely empty.
Range gen_range(BufferId buffer) {
  const std::uint32_t offset = uniform<std::uint32_t>(0, kBufferSize);
  const std::uint32_t count = *rc::gen::weightedElement<std::uint32_t>({{1, 0}, {8, 1}, {8, 2}, {4, 3}}) % (kBufferSize - offset + 1);
  return Range{buffer, offset, count};
}

/// Thread 0 may signal the flag and thread 1 may wait for it (and thread 0 signals once more at
/// its end), so that a run never hangs before its kernels are issued.
Op gen_race_op(BufferId a, BufferId b, ThreadId thread) {
  const StreamId stream = uniform<StreamId>(0, kStreams);
  const EventId event = uniform<EventId>(0, 2);
  const BufferId buffer = *rc::gen::element(a, b);
  switch (*rc::gen::weightedElement<int>({{4, 0}, {4, 1}, {3, 2}, {2, 3}, {2, 4}, {1, 5}, {1, 6}, {1, 7}})) {
    case 0: {
      const Range to = gen_range(buffer);
      return ScenarioBuilder::fill(stream, to, std::vector<float>(to.count, 1.0f));
    }
    case 1: {
      // Between two ranges of one count, in one buffer or across both (they may overlap).
      const Range from = gen_range(buffer);
      const BufferId other = *rc::gen::element(a, b);
      const std::uint32_t offset = uniform<std::uint32_t>(0, kBufferSize - from.count + 1);
      return ScenarioBuilder::copy(stream, from, Range{other, offset, from.count});
    }
    case 2: {
      // A local amax whose output may sit inside (or at the edge of) the range it reads.
      Op op = ScenarioBuilder::copy(stream, gen_range(buffer), Range{*rc::gen::element(a, b), uniform<std::uint32_t>(0, kBufferSize), 1}, "local_amax");
      op.kind = OpKind::local_amax;
      return op;
    }
    case 3: return ScenarioBuilder::record(stream, event);
    case 4: return ScenarioBuilder::wait(stream, event);
    case 5: return ScenarioBuilder::host(OpKind::stream_synchronize, stream);
    case 6: return ScenarioBuilder::host(OpKind::event_synchronize, event);
    case 7:
    default: {
      if (thread == 0) return ScenarioBuilder::host(OpKind::host_signal, 0);
      Op op = ScenarioBuilder::host(OpKind::host_wait, 0);
      op.count = 1;
      return op;
    }
  }
}

/// One rank, three streams, two buffers of four floats, one or two threads of up to ten ops.
rc::Gen<Scenario> race_program() {
  return rc::gen::exec([] {
    ScenarioBuilder builder("race oracle");
    const RankId r = builder.rank();
    for (StreamId k = 0; k < kStreams; ++k) builder.stream(r, fmt::format("s{}", k));
    builder.event(r, "e0");
    builder.event(r, "e1");
    builder.flag(r, "f0");
    const BufferId a = builder.buffer(r, "a", kBufferSize), b = builder.buffer(r, "b", kBufferSize);
    const int threads = uniform(1, 3);
    for (int t = 0; t < threads; ++t) {
      const ThreadId thread = builder.thread(r, fmt::format("t{}", t));
      const int ops = uniform(1, 11);
      for (int i = 0; i < ops; ++i) builder.op(r, thread, gen_race_op(a, b, thread));
    }
    if (threads == 2) builder.op(r, 0, ScenarioBuilder::host(OpKind::host_signal, 0));
    return builder.build();
  });
}

/// Every access of a run, with a copy of the accessing actor's clock.
class NaiveRaceOracle final : public Observer {
 public:
  Events events() const override { return {.issue = false, .access = true, .complete = false}; }
  void on_access(const AccessEvent& event) override {
    for (const Range& range : *event.reads) accesses_.push_back({event.rank, range, false, event.actor, event.epoch, *event.clock, event.site.number});
    for (const Range& range : *event.writes) accesses_.push_back({event.rank, range, true, event.actor, event.epoch, *event.clock, event.site.number});
  }
  /// Every racing pair of ops (earlier, later), in the order the run made their accesses.
  std::set<std::pair<std::uint32_t, std::uint32_t>> racing_pairs() const {
    std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
    for (std::size_t j = 0; j < accesses_.size(); ++j) {
      for (std::size_t i = 0; i < j; ++i) {
        const Access& x = accesses_[i];
        const Access& y = accesses_[j];
        if (x.rank != y.rank || x.op == y.op || !(x.write || y.write) || !share_an_element(x.range, y.range)) continue;
        if (!y.clock.covers(x.actor, x.epoch)) pairs.insert({x.op, y.op});
      }
    }
    return pairs;
  }

 private:
  struct Access {
    RankId rank;
    Range range;
    bool write;
    ActorId actor;
    Epoch epoch;
    VectorClock clock;
    std::uint32_t op;
  };
  static bool share_an_element(const Range& x, const Range& y) {
    return x.buffer == y.buffer && std::max(x.offset, y.offset) < std::min(x.offset + x.count, y.offset + y.count);
  }
  std::vector<Access> accesses_;
};

std::string pairs_text(const std::set<std::pair<std::uint32_t, std::uint32_t>>& pairs) {
  std::vector<std::string> parts;
  for (const auto& [earlier, later] : pairs) parts.push_back(fmt::format("{}->{}", earlier, later));
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

RC_GTEST_PROP(RaceOracle, the_detector_reports_every_op_the_naive_oracle_finds_racing_with_an_earlier_access_and_only_true_races, ()) {
  const Scenario scenario = *race_program();
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t> number_of;  // (thread, index) -> op number
  for_each_op(scenario, [&](std::uint32_t n, const OpRef& ref, const Op&) { number_of[{ref.thread, ref.index}] = n; });
  // A few schedules of each program: the patterns that matter need three actors in one order.
  bool races = false, subset = false;
  for (int schedule = 0; schedule < 4; ++schedule) {
    RaceDetector detector(scenario);
    NaiveRaceOracle oracle;
    Engine engine(scenario);
    engine.add_observer(&detector);
    engine.add_observer(&oracle);
    while (!engine.enabled().empty()) engine.apply(engine.enabled()[uniform<std::size_t>(0, engine.enabled().size())]);
    engine.finish();
    const auto truth = oracle.racing_pairs();
    std::set<std::pair<std::uint32_t, std::uint32_t>> reported;
    for (const Hazard& h : detector.hazards()) {
      RC_ASSERT(h.kind == HazardKind::data_race);
      RC_ASSERT(h.participants.size() == 2U);
      reported.insert({number_of.at({h.participants[0].op.thread, h.participants[0].op.index}),
                       number_of.at({h.participants[1].op.thread, h.participants[1].op.index})});
    }
    std::set<std::uint32_t> truth_later, reported_later;
    for (const auto& p : truth) truth_later.insert(p.second);
    for (const auto& p : reported) reported_later.insert(p.second);
    races |= !truth.empty();
    subset |= reported.size() < truth.size();
    const auto context = fmt::format("schedule {}: the oracle finds {} but the detector reports {}", schedule, pairs_text(truth), pairs_text(reported));
    for (const auto& p : reported) {
      if (truth.count(p) == 0) RC_FAIL(fmt::format("a reported race {}->{} is none; {}", p.first, p.second, context));
    }
    if (truth_later != reported_later) RC_FAIL("the ops that race with an earlier access differ; " + context);
  }
  RC_TAG(!races ? "no race" : subset ? "a subset of the racing pairs reported" : "every racing pair reported");
}

}  // namespace
}  // namespace amaxcheck::props
