#pragma once
/// A detector observes one run and reports hazards. One detector per file.
///
/// Which detectors a run attaches is a list of factories (sched::RunOptions::detectors);
/// `default_detectors()` is the four of src/detectors. Adding a detector: its .h/.cpp here and
/// one line in detectors.cpp's list.

#include <memory>
#include <span>
#include <vector>

#include "detectors/hazard.h"
#include "engine/observer.h"

namespace amaxcheck {

class Detector : public Observer {
 public:
  virtual const char* name() const = 0;
  virtual const std::vector<Hazard>& hazards() const = 0;
  /// Forgets the last run: from here on the detector behaves as a new one for the same
  /// scenario, keeping the memory it allocated (a Runner reuses its detectors run after run).
  virtual void reset() = 0;
};

/// Builds a fresh detector for runs of `scenario`.
using DetectorFactory = std::unique_ptr<Detector> (*)(const Scenario& scenario);

/// Race, collective, deadlock and value detectors, in the order a run gathers their hazards.
std::span<const DetectorFactory> default_detectors();

/// One detector from each factory, ready to attach to an engine for `scenario`.
std::vector<std::unique_ptr<Detector>> make_detectors(const Scenario& scenario,
                                                      std::span<const DetectorFactory> factories = default_detectors());

}  // namespace amaxcheck
