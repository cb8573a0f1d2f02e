// The race detector leaves out of its histories the accesses that no other access of the
// scenario may race with (RaceDetector::may_race_with_another): on random small programs and
// random schedules, it must report exactly what the detector that keeps every access reports,
// in the same order.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "detectors/race_detector.h"
#include "engine/engine.h"
#include "engine_model_check.h"

namespace amaxcheck::props {
namespace {

std::vector<std::string> summaries(const std::vector<Hazard>& hazards) {
  std::vector<std::string> out;
  for (const Hazard& h : hazards) out.push_back(h.summary);
  return out;
}

RC_GTEST_PROP(RacePruning, leaving_out_accesses_that_cannot_race_reports_what_keeping_every_access_reports, ()) {
  const Scenario scenario = *small_program();
  RaceDetector pruned(scenario), reference(scenario, RaceAccesses::all);
  Engine engine(scenario);
  engine.add_observer(&pruned);
  engine.add_observer(&reference);
  while (!engine.enabled().empty()) {
    const std::size_t choice = *rc::gen::inRange<std::size_t>(0, engine.enabled().size());
    engine.apply(engine.enabled()[choice]);
  }
  engine.finish();
  RC_TAG(reference.hazards().empty() ? "no race" : "races");
  RC_ASSERT(summaries(pruned.hazards()) == summaries(reference.hazards()));
}

}  // namespace
}  // namespace amaxcheck::props
