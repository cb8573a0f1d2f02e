// The mutation check: every planted engine bug (EngineOptions::mutant) must make at least one
// property fail. Each property's core check runs through RapidCheck with a fixed seed and
// shrinking off; the test prints which properties killed each mutant.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <functional>

#include "engine_model_check.h"
#include "property_checks.h"
#include "scale_update_check.h"

namespace amaxcheck::props {
namespace {

struct NamedProperty {
  const char* name;
  std::function<void(const EngineOptions&)> check;
};

std::vector<NamedProperty> core_properties() {
  std::vector<NamedProperty> all = {
      {"amax correctness", [](const EngineOptions& o) { check_amax_correctness(*safe_case(), o); }},
      {"replica consistency", [](const EngineOptions& o) { check_replica_consistency(*safe_case(), o); }},
      {"safe designs are clean", [](const EngineOptions& o) { check_safe_design_is_clean(*safe_case(), o); }},
      {"engine model", [](const EngineOptions& o) { check_engine_against_model(o); }},
      {"scale update reference", [](const EngineOptions& o) { check_scale_update_matches_reference(o); }},
      {"bad amax keeps the scale", [](const EngineOptions& o) { check_bad_amax_keeps_the_scale(o); }},
      {"FLT_MAX clamp", [](const EngineOptions& o) { check_overflowing_scale_clamps_to_flt_max(o); }},
      {"fp8 maxima", [](const EngineOptions& o) { check_format_maxima(o); }},
      {"margin", [](const EngineOptions& o) { check_margin_is_a_power_of_two(o); }},
  };
  for (UnsafeDesign d : {UnsafeDesign::wait_after_copy, UnsafeDesign::shared_comm_rank_dependent_order,
                         UnsafeDesign::serialized_rank_dependent_order, UnsafeDesign::skip_on_part_of_a_group,
                         UnsafeDesign::evaluation_module_first}) {
    all.push_back({to_string(d), [d](const EngineOptions& o) { check_unsafe_design_is_reported(d, *unsafe_case(d), o); }});
  }
  return all;
}

const char* to_string(Mutant m) { return m == Mutant::none ? "no mutant" : enum_name(m); }

/// The failure's reason: RapidCheck's description is "FILE:LINE:\nRC_FAIL(...)\n\nREASON\n\nLog: ...".
std::string why(const std::string& description) {
  const auto start = description.find("\n\n");
  if (start == std::string::npos) return description;
  const auto end = description.find('\n', start + 2);
  return description.substr(start + 2, end == std::string::npos ? std::string::npos : end - start - 2);
}

/// Listens to nothing: the expected failures here must not reach RapidCheck's global listener,
/// which would print "Some of your RapidCheck properties had failures" at exit.
class QuietListener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

/// Runs every core property under `mutant`; returns the names of those that failed.
std::vector<std::string> properties_failing_under(Mutant mutant) {
  EngineOptions options;
  options.mutant = mutant;
  rc::detail::TestParams params;
  params.seed = 0x6d7574616e74ull;  // fixed: the check is deterministic
  params.maxSuccess = 50;  // every mutant dies within the first few cases; this bounds the control run
  params.disableShrinking = true;
  std::vector<std::string> killed;
  for (const NamedProperty& p : core_properties()) {
    rc::detail::TestMetadata metadata;
    metadata.id = std::string("mutation/") + p.name;
    QuietListener quiet;
    const auto result = rc::detail::checkTestable([&] { p.check(options); }, metadata, params, quiet);
    if (result.template is<rc::detail::FailureResult>()) {
      killed.push_back(p.name);
      std::cout << fmt::format("  {}: killed by \"{}\": {}\n", to_string(mutant), p.name,
                               why(result.template get<rc::detail::FailureResult>().description));
    }
  }
  return killed;
}

TEST(MutationCheck, a_collective_that_completes_without_every_member_fails_a_property) {
  EXPECT_FALSE(properties_failing_under(Mutant::complete_without_all_members).empty());
}

TEST(MutationCheck, ignoring_event_waits_fails_a_property) {
  EXPECT_FALSE(properties_failing_under(Mutant::ignore_event_waits).empty());
}

TEST(MutationCheck, dropping_the_implicit_communicator_ordering_fails_a_property) {
  EXPECT_FALSE(properties_failing_under(Mutant::drop_comm_ordering).empty());
}

TEST(MutationCheck, a_scale_update_without_the_finite_check_fails_a_property) {
  EXPECT_FALSE(properties_failing_under(Mutant::skip_finite_check).empty());
}

TEST(MutationCheck, the_correct_engine_fails_no_property) {
  // The control: the same runs with no mutant must all pass, or a kill above means nothing.
  const auto failing = properties_failing_under(Mutant::none);
  EXPECT_TRUE(failing.empty()) << fmt::format("{}", fmt::join(failing, ", "));
}

}  // namespace
}  // namespace amaxcheck::props
