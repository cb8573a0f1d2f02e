#pragma once
/// Cost figures of a timed run, for design-space exploration. Derived from op timings by op
/// name, following the protocol library's naming: amax reductions are `amax_reduce*`.

#include "model/scenario.h"
#include "scheduler/timed_strategy.h"

namespace amaxcheck::cli {

struct CostFigures {
  double iteration_time_us = 0;        ///< slowest rank's end time divided by iterations
  double exposed_amax_latency_us = 0;  ///< per rank and iteration: amax reduction time not hidden behind kernels
  double amax_queued_us = 0;           ///< per rank and iteration: amax reduction ready on its stream but held back by earlier collectives
  std::uint64_t extra_comm_memory_bytes = 0;  ///< estimate for a separate amax communicator
};

/// `iterations` divides totals into per-iteration figures; `separate_amax_comm` adds the
/// memory estimate of one more NCCL communicator (about 1 GiB of buffers unless it is split
/// with shared resources; see shared/DESIGN.md section 6).
CostFigures cost_figures(const Scenario& scenario, const sched::TimedRun& run, std::uint32_t iterations,
                         bool separate_amax_comm);

}  // namespace amaxcheck::cli
