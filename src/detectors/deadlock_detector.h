#pragma once
/// Deadlock / hang: work remains and no action is enabled. Reports the wait-for cycle when
/// there is one (e.g. two streams each waiting on the other through NCCL's implicit
/// per-communicator order), otherwise a hang: for each collective some lane waits in, the
/// members that never issued it, and those that issued it but whose stream is blocked behind
/// another op, named.

#include "detectors/detector.h"

namespace amaxcheck {

/// Whether a deadlock hazard is a wait-for cycle (rather than a hang on something missing).
bool is_wait_for_cycle(const Hazard& hazard);

class DeadlockDetector final : public Detector {
 public:
  const char* name() const override { return "deadlock"; }
  Events events() const override { return {false, false, false}; }
  const std::vector<Hazard>& hazards() const override { return hazards_; }
  void on_finish(const Engine& engine) override;
  void reset() override { hazards_.clear(); }

 private:
  std::vector<Hazard> hazards_;
};

}  // namespace amaxcheck
