#include "detectors/collective_detector.h"
#include "detectors/deadlock_detector.h"
#include "detectors/race_detector.h"
#include "detectors/value_detector.h"

namespace amaxcheck {

std::vector<std::unique_ptr<Detector>> make_detectors(const Scenario& scenario) {
  std::vector<std::unique_ptr<Detector>> detectors;
  detectors.push_back(std::make_unique<RaceDetector>(scenario));
  detectors.push_back(std::make_unique<CollectiveDetector>(scenario));
  detectors.push_back(std::make_unique<DeadlockDetector>());
  detectors.push_back(std::make_unique<ValueDetector>(scenario));
  return detectors;
}

}  // namespace amaxcheck
