#pragma once
/// `check --backend gpu`: run one simulator schedule, replay the same schedule on GPUs, and
/// compare final amax_history / scale / scale_inv bit for bit and the verdicts.
///
/// Two launch modes:
/// 1. one process (no launcher variables): this process runs every rank on its local GPUs;
/// 2. mpirun / srun with one process per GPU (launch_env.h): every process runs the same
///    seeded simulation, replays only its own ranks, and receives every replica's checked
///    values, so every process prints a full report with "process", "processes" and
///    "launcher" (the harness merges them: harness/amaxharness/launch/collect.py). This needs
///    amaxcheck-mpi; plain amaxcheck refuses a multi-process launch (launch_exchange.h).

#include "cli/check_runner.h"

namespace amaxcheck::cli {

/// Exit 2 when launched as several processes by a program without an exchange (checked
/// first), or when no CUDA device is usable in any process (with the driver's reason); 1 on a
/// hazard, a hang or an oracle mismatch; 0 when both backends agree on a clean run.
int check_on_gpu(const Scenario& scenario, const CheckRequest& request, bool json);

}  // namespace amaxcheck::cli
