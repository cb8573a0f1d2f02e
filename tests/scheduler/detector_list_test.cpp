// RunOptions::detectors decides which detectors a run attaches: the default four, a subset, or a
// detector written outside src/detectors.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "detectors/race_detector.h"
#include "protocols/protocol.h"
#include "scheduler/random_strategy.h"
#include "scheduler/run.h"
#include "scenarios.h"

namespace amaxcheck::sched {
namespace {

/// Reports one hazard naming how many collectives were issued, so a test can see it was attached.
class CollectiveCounter final : public Detector {
 public:
  const char* name() const override { return "collective counter"; }
  const std::vector<Hazard>& hazards() const override { return hazards_; }
  void on_issue(const IssueEvent& event) override { issued_ += is_collective(event.site.op->kind) ? 1 : 0; }
  void on_finish(const Engine&) override {
    Hazard h;
    h.kind = HazardKind::value_mismatch;
    h.summary = std::to_string(issued_) + " collectives issued";
    hazards_.push_back(std::move(h));
  }
  void reset() override {
    issued_ = 0;
    hazards_.clear();
  }

 private:
  int issued_ = 0;
  std::vector<Hazard> hazards_;
};

std::unique_ptr<Detector> make_counter(const Scenario&) { return std::make_unique<CollectiveCounter>(); }
std::unique_ptr<Detector> make_race(const Scenario& s) { return std::make_unique<RaceDetector>(s); }

RunResult run_with(const Scenario& scenario, std::span<const DetectorFactory> detectors) {
  RandomStrategy strategy(7);
  RunOptions options;
  options.detectors = detectors;
  return run_once(scenario, strategy, options);
}

TEST(DetectorList, the_default_list_finds_the_race_and_the_swapped_collectives) {
  EXPECT_EQ(default_detectors().size(), 4u);
  EXPECT_TRUE(run_with(testing::racy_collective(2), default_detectors()).has_hazard(HazardKind::data_race));
  EXPECT_TRUE(run_with(testing::collective_order_swap(), default_detectors()).has_hazard(HazardKind::collective_mismatch));
}

TEST(DetectorList, a_run_reports_only_what_its_detectors_look_for) {
  const DetectorFactory race_only[] = {&make_race};
  const RunResult swap = run_with(testing::collective_order_swap(), race_only);
  EXPECT_FALSE(swap.has_hazard(HazardKind::collective_mismatch));
  EXPECT_TRUE(run_with(testing::racy_collective(2), race_only).has_hazard(HazardKind::data_race));
  const RunResult none = run_with(testing::racy_collective(2), {});
  EXPECT_EQ(none.outcome, RunOutcome::finished);
  EXPECT_TRUE(none.hazards.empty());
}

TEST(DetectorList, a_detector_from_outside_src_detectors_is_attached_by_one_list_entry) {
  const DetectorFactory counter[] = {&make_counter};
  const RunResult run = run_with(testing::racy_collective(3), counter);
  ASSERT_EQ(run.hazards.size(), 1u);
  EXPECT_EQ(run.hazards[0].summary, "3 collectives issued");
}

TEST(DetectorList, a_runner_resets_its_detectors_so_each_run_counts_only_its_own_events) {
  const DetectorFactory counter[] = {&make_counter};
  const Scenario s = testing::racy_collective(3);
  RunOptions options;
  options.detectors = counter;
  Runner runner(s, options);
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    RandomStrategy strategy(seed);
    const RunResult run = runner.run(strategy);
    ASSERT_EQ(run.hazards.size(), 1u);
    EXPECT_EQ(run.hazards[0].summary, "3 collectives issued") << "run " << seed;
  }
}

/// Forwards every event to a detector it owns, declaring all of them (Observer::events' default),
/// so the engine calls it for each: what the detector sees when its own events() is ignored.
class EveryEvent final : public Detector {
 public:
  explicit EveryEvent(std::unique_ptr<Detector> inner) : inner_(std::move(inner)) {}
  const char* name() const override { return inner_->name(); }
  const std::vector<Hazard>& hazards() const override { return inner_->hazards(); }
  void on_issue(const IssueEvent& event) override { inner_->on_issue(event); }
  void on_access(const AccessEvent& event) override { inner_->on_access(event); }
  void on_complete(const CompleteEvent& event) override { inner_->on_complete(event); }
  void on_finish(const Engine& engine) override { inner_->on_finish(engine); }
  void reset() override { inner_->reset(); }

 private:
  std::unique_ptr<Detector> inner_;
};

/// The default detectors, each behind an EveryEvent (one factory per default one, by index).
template <std::size_t I>
std::unique_ptr<Detector> every_event(const Scenario& s) {
  return std::make_unique<EveryEvent>(default_detectors()[I](s));
}

std::string described(const std::vector<Hazard>& hazards) {
  std::string text;
  for (const Hazard& h : hazards) {
    text += h.key() + " | " + h.summary + "\n";
    for (const Participant& p : h.participants) text += "  " + p.op_name + " " + p.lane + " " + std::to_string(p.step) + "\n";
    for (const std::string& line : h.details) text += "  " + line + "\n";
  }
  return text;
}

// The engine calls a detector only for the events it declares (Observer::events). A detector
// that handled an event it did not declare would miss it: its hazards would differ from those it
// reports when it is called for every event. The scenarios reach every kind the four report.
TEST(DetectorList, each_default_detector_declares_every_event_it_handles) {
  ASSERT_EQ(default_detectors().size(), 4u);
  const DetectorFactory everything[] = {&every_event<0>, &every_event<1>, &every_event<2>, &every_event<3>};
  std::vector<Scenario> scenarios = {testing::racy_collective(2), testing::collective_order_swap()};
  for (const bool serialized : {false, true}) {
    ProtocolKnobs k;
    k.protocol = ProtocolName::te_async;
    k.comm = CommChoice::shared;
    k.wait = WaitPoint::after_copy;
    k.amax_order = AmaxOrder::rank_dependent;
    k.kernels = serialized ? KernelConcurrency::serialized : KernelConcurrency::concurrent;
    k.dp = 2;
    k.modules = 1;
    k.iters = 2;
    scenarios.push_back(build_protocol(k));
  }
  {
    // Megatron's old bug: the DP group as the FP8 group under TP, so TP peers' amaxes diverge.
    ProtocolKnobs k;
    k.protocol = ProtocolName::te_sync;
    k.tp = 2;
    k.dp = 2;
    k.modules = 1;
    k.iters = 1;
    k.group = GroupKind::dp;
    scenarios.push_back(build_protocol(k));
  }
  std::set<HazardKind> kinds;
  for (const Scenario& s : scenarios) {
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      RandomStrategy direct_strategy(seed), forwarded_strategy(seed);
      RunOptions direct, forwarded;
      forwarded.detectors = everything;
      const RunResult a = run_once(s, direct_strategy, direct);
      const RunResult b = run_once(s, forwarded_strategy, forwarded);
      ASSERT_EQ(described(a.hazards), described(b.hazards)) << "seed " << seed;
      for (const Hazard& h : a.hazards) kinds.insert(h.kind);
    }
  }
  // The comparison means something only where the detectors found things.
  for (const HazardKind kind : {HazardKind::data_race, HazardKind::collective_mismatch, HazardKind::deadlock,
                                HazardKind::replica_divergence, HazardKind::value_mismatch}) {
    EXPECT_TRUE(kinds.count(kind)) << to_string(kind) << " never found";
  }
}

}  // namespace
}  // namespace amaxcheck::sched
