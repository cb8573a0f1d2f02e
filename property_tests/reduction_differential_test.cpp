// The exhaustive search's reductions against the plain search that tries every interleaving:
// same verdict, same hazards, same end states, on small generated scenarios. And the check
// itself: a deliberately unsound reduction must make it fail.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "reduction_check.h"

namespace amaxcheck::props {
namespace {

RC_GTEST_PROP(ReductionDifferential, the_reduced_search_reports_what_the_naive_search_reports, ()) {
  check_reduction_matches_naive_search();
}

/// Listens to nothing: the expected failure below must not reach RapidCheck's global listener.
class QuietListener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

bool fails_with(sched::ReductionMutant mutant) {
  sched::ExhaustiveOptions reduced;
  reduced.mutant = mutant;
  rc::detail::TestParams params;
  params.seed = 0x72656475636564ull;  // fixed: the check is deterministic
  params.maxSuccess = 300;
  params.disableShrinking = true;
  rc::detail::TestMetadata metadata;
  metadata.id = "reduction mutation";
  QuietListener quiet;
  const auto result = rc::detail::checkTestable([&] { check_reduction_matches_naive_search(reduced); }, metadata, params, quiet);
  return result.template is<rc::detail::FailureResult>();
}

TEST(ReductionMutation, a_reduction_that_lets_reads_and_writes_commute_is_caught) {
  EXPECT_TRUE(fails_with(sched::ReductionMutant::reads_commute));
}

TEST(ReductionMutation, a_search_that_ignores_steps_disabling_a_host_synchronization_is_caught) {
  EXPECT_TRUE(fails_with(sched::ReductionMutant::ignore_disabling));
}

TEST(ReductionMutation, the_sound_reduction_passes_the_same_cases) {
  EXPECT_FALSE(fails_with(sched::ReductionMutant::none));  // the control: the kill above means something
}

}  // namespace
}  // namespace amaxcheck::props
