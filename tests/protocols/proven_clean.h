#pragma once
// A design point's fixed twin is "proven clean" only by the whole exhaustive search: every
// schedule class covered, no hazard. The variant tests hold their clean values to that.
#include <gtest/gtest.h>

#include "protocols/protocol.h"
#include "scheduler/explore.h"

namespace amaxcheck::testing {

/// The whole exhaustive search (not stopping at the first hazard).
inline sched::ExploreResult search_exhaustively(const ProtocolKnobs& knobs) {
  sched::ExploreOptions options;
  options.strategy = "exhaustive";
  options.stop_at_first = false;
  options.args.set("max-schedules", 200'000);  // far above what these need; hitting it fails the test
  return sched::explore(build_protocol(knobs), options);
}

inline void expect_proven_clean(const ProtocolKnobs& knobs) {
  const sched::ExploreResult r = search_exhaustively(knobs);
  EXPECT_TRUE(r.coverage_complete) << command_line(knobs) << ": " << r.runs << " schedules";
  EXPECT_TRUE(r.hazards.empty()) << command_line(knobs) << ": " << r.hazards.front().hazard.summary;
}

}  // namespace amaxcheck::testing
