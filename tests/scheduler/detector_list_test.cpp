// RunOptions::detectors decides which detectors a run attaches: the default four, a subset, or a
// detector written outside src/detectors.
#include <gtest/gtest.h>

#include "detectors/race_detector.h"
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

}  // namespace
}  // namespace amaxcheck::sched
