#pragma once
/// Values: at the end of a completed run, every ReplicaCheck of the scenario holds
/// bit-identical values on all its replicas (replica consistency), equal to the sequential
/// reference values when the scenario gives them (amax correctness: reduced amax is the max over
/// the group, and history, scale and scale_inv follow from it).

#include "detectors/detector.h"

namespace amaxcheck {

class ValueDetector final : public Detector {
 public:
  explicit ValueDetector(const Scenario& scenario) : scenario_(scenario) {}
  const char* name() const override { return "values"; }
  const std::vector<Hazard>& hazards() const override { return hazards_; }
  void on_finish(const Engine& engine) override;

 private:
  const Scenario& scenario_;
  std::vector<Hazard> hazards_;
};

}  // namespace amaxcheck
