#pragma once
/// The cost model of timed runs: how long each action takes, in microseconds.
///
/// - issue:    `launch_overhead_us` for a device op (a kernel launch or NCCL call), 0 for a
///             host op (host-blocking ops cost nothing beyond waiting for their condition);
/// - execute:  `op.cost_us` when the scenario gives one, else a per-kind default;
/// - join:     0 (the collective occupies its stream until the complete);
/// - complete: alpha + beta * bytes * factor, where bytes = elements * 4 (f32) or 2 (bf16) and
///             the factor is the algorithm's: ring all-reduce 2(m-1)/m, ring all-gather and
///             reduce-scatter (m-1)/m, broadcast 1; tree log2(m) for all of them (m members).
/// Only the cost model knows op kinds; the timed strategy just adds durations.

#include <cstdint>
#include <nlohmann/json.hpp>

#include "model/scenario.h"

namespace amaxcheck::sched {

enum class CollectiveAlgo : std::uint8_t { ring, tree };

struct CostModel {
  double launch_overhead_us = 4.0;
  double kernel_default_us = 10.0;     ///< fill, fp8_cast
  double small_kernel_us = 3.0;        ///< local_amax, copy, scale_update
  double event_op_us = 0.0;            ///< event_record, stream_wait_event, work_wait
  double alpha_us = 8.0;               ///< per-collective latency (NVLink, small messages)
  double beta_us_per_byte = 1.0 / 100'000.0;  ///< 100 GB/s bus bandwidth
  CollectiveAlgo algo = CollectiveAlgo::ring;

  /// Duration of issuing `op` from its host thread.
  double issue_us(const Op& op) const;
  /// Duration of running a non-collective device op on its stream.
  double execute_us(const Op& op) const;
  /// Duration of a collective once every member joined, for `members` ranks (`op.cost_us`
  /// overrides the formula when set).
  double collective_us(const Op& op, std::size_t members) const;
  /// Bytes a collective moves per member (its largest buffer).
  static std::uint64_t collective_bytes(const Op& op);

  nlohmann::ordered_json to_json() const;
};

}  // namespace amaxcheck::sched
