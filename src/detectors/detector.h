#pragma once
/// A detector observes one run and reports hazards. One detector per file.

#include <memory>
#include <vector>

#include "detectors/hazard.h"
#include "engine/observer.h"

namespace amaxcheck {

class Detector : public Observer {
 public:
  virtual const char* name() const = 0;
  virtual const std::vector<Hazard>& hazards() const = 0;
};

/// The four detectors, ready to attach to an engine for `scenario`.
std::vector<std::unique_ptr<Detector>> make_detectors(const Scenario& scenario);

}  // namespace amaxcheck
