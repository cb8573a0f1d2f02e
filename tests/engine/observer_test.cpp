// What the engine tells observers: every event's op number is its op's place in for_each_op's
// order (detectors index per-op tables by it), and an observer that asks for communicator ops'
// issues only gets exactly those, in the same order as one that gets every issue.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "engine/engine.h"
#include "engine/observer.h"
#include "model/builder.h"
#include "model/op_kind.h"

namespace amaxcheck {
namespace {

/// Two ranks on one communicator; rank 0 has two threads and an event, so that op numbers cross
/// thread and rank boundaries, and issues mix kernels, event ops, host ops and collectives.
Scenario two_ranks_with_two_threads_on_rank0() {
  ScenarioBuilder b("op_numbers");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId dp = b.comm("dp", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId main = b.thread(r, "main");
    const StreamId s = b.stream(r, "s");
    const BufferId x = b.buffer(r, "x", 4), y = b.buffer(r, "y", 4);
    b.op(r, main, ScenarioBuilder::fill(s, {x, 0, 4}, {1.0f, 2.0f, 3.0f, 4.0f}, "fill_x"));
    b.op(r, main, ScenarioBuilder::all_reduce(s, dp, {x, 0, 4}, {x, 0, 4}, "reduce_x"));
    if (r == r0) {
      const ThreadId side = b.thread(r, "side");
      const StreamId t = b.stream(r, "t");
      const EventId e = b.event(r, "done");
      b.op(r, main, ScenarioBuilder::record(s, e, "record_done"));
      b.op(r, side, ScenarioBuilder::wait(t, e, "wait_done"));
      b.op(r, side, ScenarioBuilder::copy(t, {x, 0, 4}, {y, 0, 4}, "copy_x"));
      b.op(r, side, ScenarioBuilder::host(OpKind::device_synchronize, 0, "sync"));
    } else {
      b.op(r, main, ScenarioBuilder::copy(s, {x, 0, 2}, {y, 0, 2}, "copy_x"));
    }
  }
  return b.build();
}

/// Records every issue and access event's op, number and kind.
class Recorder final : public Observer {
 public:
  explicit Recorder(Events events = {}) : events_(events) {}
  Events events() const override { return events_; }
  void on_issue(const IssueEvent& event) override { issues.push_back(event.site); }
  void on_access(const AccessEvent& event) override { accesses.push_back(event.site); }
  std::vector<OpSite> issues, accesses;

 private:
  Events events_;
};

/// Runs `s` to its end, taking the last enabled action at each step (any schedule will do).
void run_to_end(const Scenario& s, const std::vector<Observer*>& observers) {
  Engine engine(s);
  for (Observer* o : observers) engine.add_observer(o);
  while (!engine.enabled().empty()) engine.apply(engine.enabled().back());
  engine.finish();
  ASSERT_TRUE(engine.done());
}

TEST(Observer, every_events_op_number_is_its_ops_place_in_for_each_op_order) {
  const Scenario s = two_ranks_with_two_threads_on_rank0();
  std::map<std::tuple<RankId, ThreadId, std::uint32_t>, std::pair<std::uint32_t, const Op*>> numbered;
  std::uint32_t count = 0;
  for_each_op(s, [&](std::uint32_t number, const OpRef& ref, const Op& op) {
    EXPECT_EQ(number, count++) << "dense, from 0";
    numbered[{ref.rank, ref.thread, ref.index}] = {number, &op};
  });
  EXPECT_EQ(count, 9u);
  Recorder recorder;
  run_to_end(s, {&recorder});
  EXPECT_EQ(recorder.issues.size(), 9u);
  EXPECT_FALSE(recorder.accesses.empty());
  for (const auto* sites : {&recorder.issues, &recorder.accesses}) {
    for (const OpSite& site : *sites) {
      const auto& [number, op] = numbered.at({site.ref.rank, site.ref.thread, site.ref.index});
      EXPECT_EQ(site.number, number) << site.op->name << " on rank " << site.ref.rank;
      EXPECT_EQ(site.op, op) << site.op->name;
    }
  }
}

TEST(Observer, one_that_asks_for_comm_issues_only_gets_those_in_the_same_order) {
  const Scenario s = two_ranks_with_two_threads_on_rank0();
  Recorder all;
  Recorder comm_only(Observer::Events{.comm_issues_only = true});
  run_to_end(s, {&all, &comm_only});
  std::vector<std::uint32_t> expected, got;
  for (const OpSite& site : all.issues) {
    if (is_comm_op(site.op->kind)) expected.push_back(site.number);
  }
  for (const OpSite& site : comm_only.issues) got.push_back(site.number);
  EXPECT_EQ(expected.size(), 2u) << "one all-reduce per rank";
  EXPECT_EQ(got, expected);
  EXPECT_EQ(comm_only.accesses.size(), all.accesses.size()) << "accesses are not filtered";
}

}  // namespace
}  // namespace amaxcheck
