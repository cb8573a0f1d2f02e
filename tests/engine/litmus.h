#pragma once
// Brute-force exploration of every interleaving of a tiny scenario, for litmus tests.
#include <functional>
#include <string>
#include <vector>

#include "detectors/detector.h"
#include "engine/engine.h"

namespace amaxcheck::litmus {

struct Outcome {
  const Engine* engine = nullptr;
  std::vector<Hazard> hazards;
};

/// Visits the end of every interleaving (re-running each prefix from scratch).
inline std::size_t explore_all(const Scenario& s, const std::function<void(const Outcome&)>& visit,
                               EngineOptions options = {}) {
  std::size_t runs = 0;
  std::vector<std::size_t> path;
  std::function<void()> dfs = [&] {
    Engine engine(s, options);
    auto detectors = make_detectors(s);
    for (auto& d : detectors) engine.add_observer(d.get());
    for (std::size_t choice : path) engine.apply(engine.enabled().at(choice));
    const std::size_t width = engine.enabled().size();
    if (width == 0) {
      engine.finish();
      Outcome o{&engine, {}};
      for (auto& d : detectors) o.hazards.insert(o.hazards.end(), d->hazards().begin(), d->hazards().end());
      ++runs;
      visit(o);
      return;
    }
    for (std::size_t i = 0; i < width; ++i) {
      path.push_back(i);
      dfs();
      path.pop_back();
    }
  };
  dfs();
  return runs;
}

inline std::vector<Hazard> run_once(const Scenario& s, EngineOptions options = {}) {
  Engine engine(s, options);
  auto detectors = make_detectors(s);
  for (auto& d : detectors) engine.add_observer(d.get());
  run_first_enabled(engine);
  std::vector<Hazard> all;
  for (auto& d : detectors) all.insert(all.end(), d->hazards().begin(), d->hazards().end());
  return all;
}

/// One run whose every step is `pick`'s choice among the enabled actions (an index into them).
inline std::vector<Hazard> run_picking(const Scenario& s, const std::function<std::size_t(const std::vector<Action>&)>& pick) {
  Engine engine(s);
  auto detectors = make_detectors(s);
  for (auto& d : detectors) engine.add_observer(d.get());
  while (!engine.enabled().empty()) engine.apply(engine.enabled().at(pick(engine.enabled())));
  engine.finish();
  std::vector<Hazard> all;
  for (auto& d : detectors) all.insert(all.end(), d->hazards().begin(), d->hazards().end());
  return all;
}

inline bool has(const std::vector<Hazard>& hs, HazardKind kind) {
  for (const auto& h : hs) {
    if (h.kind == kind) return true;
  }
  return false;
}

/// The hazards' summaries, one per line, for failure messages.
inline std::string describe(const std::vector<Hazard>& hs) {
  std::string out;
  for (const auto& h : hs) out += std::string(to_string(h.kind)) + ": " + h.summary + "\n";
  return out;
}

}  // namespace amaxcheck::litmus
