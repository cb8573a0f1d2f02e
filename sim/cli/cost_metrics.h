#pragma once
/// Cost figures of a timed run, for design-space exploration. Derived from op timings by op
/// name, following the protocol library's naming: amax reductions are `amax_reduce*`.
///
/// - exposed amax latency: how long the consumers of reduced amaxes wait for them. A consumer
///   is a stream wait (work_wait, stream_wait_event) on an event recorded right after an amax
///   reduction on its stream; it waits from the moment its own stream was ready (its previous
///   op ended) and it was issued, to the moment it could proceed. Queueing behind other
///   collectives is part of that wait.
/// - amax queued: how long an amax reduction, issued and ready on its stream, could not start
///   (join) because earlier collectives on its communicator (a shared one's gradient buckets),
///   or under serialized kernels on its device, had not completed.
/// - iteration time: the slowest rank's end time divided by the iterations.
/// - extra communicator memory: CostModel::extra_comm_memory_bytes for the amax communicator's
///   members and nodes, when it is a separate one.
/// Exposed and queued are per rank and iteration (the mean over ranks).

#include <string>

#include "model/scenario.h"
#include "scheduler/cost_model.h"
#include "scheduler/timed_strategy.h"

namespace amaxcheck::cli {

struct CostFigures {
  double iteration_time_us = 0;
  double exposed_amax_latency_us = 0;
  double amax_queued_us = 0;
  std::uint64_t extra_comm_memory_bytes = 0;
  std::string amax_algo;  ///< how NCCL's tuner would run the amax reduction, e.g. "tree/LL"
  double amax_collective_us = 0;  ///< its uncontended duration
};

CostFigures cost_figures(const Scenario& scenario, const sched::TimedRun& run, const sched::CostModel& cost,
                         std::uint32_t iterations, bool separate_amax_comm);

}  // namespace amaxcheck::cli
