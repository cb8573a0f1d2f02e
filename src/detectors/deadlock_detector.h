#pragma once
/// Deadlock / hang: work remains and no action is enabled. Reports the wait-for cycle when
/// there is one (e.g. two streams each waiting on the other through NCCL's implicit
/// per-communicator order), otherwise the ranks that never joined what others wait in.

#include "detectors/detector.h"

namespace amaxcheck {

class DeadlockDetector final : public Detector {
 public:
  const char* name() const override { return "deadlock"; }
  const std::vector<Hazard>& hazards() const override { return hazards_; }
  void on_finish(const Engine& engine) override;

 private:
  std::vector<Hazard> hazards_;
};

}  // namespace amaxcheck
