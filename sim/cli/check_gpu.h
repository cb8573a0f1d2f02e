#pragma once
/// `check --backend gpu`: run one simulator schedule, replay the same schedule on this machine's
/// GPUs, and compare final amax_history / scale / scale_inv bit for bit and the verdicts.

#include "cli/check_runner.h"

namespace amaxcheck::cli {

/// Exit 2 when no CUDA device is usable (with the driver's reason), 1 on a hazard, a hang or an
/// oracle mismatch, 0 when both backends agree on a clean run.
int check_on_gpu(const Scenario& scenario, const CheckRequest& request, bool json);

}  // namespace amaxcheck::cli
