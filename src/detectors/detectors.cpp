#include <array>
#include <type_traits>

#include "detectors/collective_detector.h"
#include "detectors/deadlock_detector.h"
#include "detectors/race_detector.h"
#include "detectors/value_detector.h"

namespace amaxcheck {
namespace {

template <typename D>
std::unique_ptr<Detector> make(const Scenario& scenario) {
  if constexpr (std::is_constructible_v<D, const Scenario&>) {
    return std::make_unique<D>(scenario);
  } else {
    return std::make_unique<D>();
  }
}

constexpr std::array<DetectorFactory, 4> defaults{
    &make<RaceDetector>,
    &make<CollectiveDetector>,
    &make<DeadlockDetector>,
    &make<ValueDetector>,
};

}  // namespace

std::span<const DetectorFactory> default_detectors() { return defaults; }

std::vector<std::unique_ptr<Detector>> make_detectors(const Scenario& scenario, std::span<const DetectorFactory> factories) {
  std::vector<std::unique_ptr<Detector>> detectors;
  detectors.reserve(factories.size());
  for (DetectorFactory make_one : factories) detectors.push_back(make_one(scenario));
  return detectors;
}

}  // namespace amaxcheck
