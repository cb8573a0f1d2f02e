#pragma once
// Runs a generated scenario once through the engine with every detector attached.
#include <set>
#include <string>
#include <vector>

#include "detectors/detector.h"
#include "engine/engine.h"
#include "protocols/protocol.h"

namespace amaxcheck::testing {

struct ProtocolRun {
  Scenario scenario;
  std::vector<Hazard> hazards;
  std::set<HazardKind> kinds;
  bool done = false;  ///< every program finished and every stream drained
  std::size_t steps = 0;

  bool has(HazardKind kind) const { return kinds.count(kind) > 0; }
  /// A hazard of `kind` about a tensor whose name contains `subject`.
  bool has_about(HazardKind kind, const std::string& subject) const {
    for (const Hazard& h : hazards) {
      if (h.kind == kind && h.subject.find(subject) != std::string::npos) return true;
    }
    return false;
  }
  std::string describe() const {
    std::string text;
    for (const Hazard& h : hazards) text += std::string(to_string(h.kind)) + ": " + h.summary + "\n";
    return text.empty() ? "no hazards\n" : text;
  }
};

/// Builds the scenario for `knobs` and runs it, always picking the first enabled action.
inline ProtocolRun run_protocol(const ProtocolKnobs& knobs) {
  ProtocolRun run;
  run.scenario = build_protocol(knobs);
  Engine engine(run.scenario);
  auto detectors = make_detectors(run.scenario);
  for (auto& d : detectors) engine.add_observer(d.get());
  run.steps = run_first_enabled(engine).size();
  run.done = engine.done();
  for (auto& d : detectors) {
    for (const Hazard& h : d->hazards()) {
      run.hazards.push_back(h);
      run.kinds.insert(h.kind);
    }
  }
  return run;
}

/// How many ops of `rank`'s programs are named `name`.
inline std::size_t count_ops(const Scenario& s, RankId rank, const std::string& name) {
  std::size_t n = 0;
  for (const Thread& thread : s.ranks[rank].threads) {
    for (const Op& op : thread.program) n += op.name == name ? 1 : 0;
  }
  return n;
}

/// Knobs from command-line style pairs, e.g. knobs_of(ProtocolName::te_async, {{"comm", "shared"}}).
inline ProtocolKnobs knobs_of(ProtocolName protocol, std::vector<std::pair<std::string, std::string>> settings) {
  ProtocolKnobs knobs;
  knobs.protocol = protocol;
  for (const auto& [name, value] : settings) set_knob(knobs, name, value);
  return knobs;
}

}  // namespace amaxcheck::testing
