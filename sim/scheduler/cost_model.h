#pragma once
/// The cost model of timed runs: how long each action takes, in microseconds.
///
/// - issue:    `launch_overhead_us` for a device op (a kernel launch or NCCL call), 0 for a
///             host op (host-blocking ops cost nothing beyond waiting for their condition);
/// - execute:  `op.cost_us` when the scenario gives one, else `op.cost_flops` at the preset's
///             GEMM rate, else a per-kind default;
/// - join:     0 (the collective occupies its stream until the complete);
/// - complete: the collective's time under NCCL's cost structure (below), for the bytes it
///             stands for: `op.cost_bytes`, else its largest buffer (elements * 4 or 2 bytes).
///
/// The collective model follows the structure of NCCL's tuner (NVIDIA/nccl
/// src/graph/tuning.cc, ncclTopoTuneModel / ncclTopoGetAlgoTime); the numbers are ours:
///
///     time(algo, proto) = latency(algo, proto) + bytes / (1000 * algBw(algo, proto))   [us, GB/s]
///     ring all-reduce latency = base + (2(n-1) - 2(N-1)) * intraHop + 2(N-1) * interHop
///     tree all-reduce latency = base + 2 * ((n/N - 1) * intraHop + log2(N) * interHop)
///     NVLS (one node, NVSwitch): base + intraHop, Simple only
///     busBw = channels * per-channel speed (NVLink when one node, the network otherwise),
///             times the protocol's efficiency (LL 1/4, LL128 0.92, Simple 1); tree 0.9
///     algBw = busBw * n / (2(n-1)) for a ring all-reduce, busBw / 2 for tree and NVLS,
///             busBw * n / (n-1) for a ring all-gather / reduce-scatter, busBw for broadcast
///
/// for n ranks on N nodes, and NCCL's choice is the (algorithm, protocol) of least time, as
/// its tuner picks it. `flat` keeps the older model: alpha + beta * bytes * factor.
///
/// Contention (shared links and channels; applied by the timed strategy): while collectives of
/// different communicators transfer at once on a rank they split its bandwidth, so one that
/// starts while others run is delayed by their transfer time still to go, at most its own
/// transfer per other (a one-pass reading of processor sharing: those already running keep
/// their end time). Latency parts are not shared.
///
/// Only the cost model knows op kinds; the timed strategy just adds durations.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck::sched {

enum class CollectiveAlgo : std::uint8_t { ring, tree, nvls };
enum class CollectiveProto : std::uint8_t { ll, ll128, simple };

const char* to_string(CollectiveAlgo algo);
const char* to_string(CollectiveProto proto);

/// The machine a timed run models: link speeds and latencies per GPU, channels, GEMM rate.
/// The defaults are the default preset's, h100-8x-nvlink-ib400 (`topology_preset`), so a
/// default-constructed CostModel prices what `--strategy timed` without options does.
struct Topology {
  std::string name = "h100-8x-nvlink-ib400";
  bool flat = false;              ///< the older alpha + beta model (no topology)
  bool intra_pcie = false;        ///< intra-node links are PCIe (PCI hop latencies, no NVLS)
  bool nvls = true;               ///< NVLink SHARP on one node (NVSwitch, H100 and later)
  std::uint32_t channels = 16;    ///< NCCL channels per communicator
  double intra_gbps_per_channel = 23.5;  ///< intra-node bus bandwidth per channel (GB/s)
  double inter_gbps_per_channel = 24;    ///< network bus bandwidth per channel (GB/s)
  double nvls_busbw_gbps = 470;   ///< NVLS all-reduce bus bandwidth on one node
  double gemm_tflops = 600;       ///< achieved dense GEMM rate for `cost_flops`
};

/// The presets `--topology` accepts: h100-8x-nvlink-ib400, h200-8x-nvlink-ib400, pcie, flat.
std::optional<Topology> topology_preset(const std::string& name);
std::string topology_preset_names();

/// What one collective costs and how NCCL's tuner would run it.
struct CollectiveCost {
  CollectiveAlgo algo = CollectiveAlgo::ring;
  CollectiveProto proto = CollectiveProto::simple;
  double latency_us = 0;   ///< the latency part (not shared under contention)
  double transfer_us = 0;  ///< bytes / algBw at the full bandwidth
  double total_us() const { return latency_us + transfer_us; }
};

/// How the separate communicator is created (its memory: `extra_comm_memory_bytes`).
enum class CommInit : std::uint8_t { split_shared, split, fresh };
const char* to_string(CommInit init);

struct CostModel {
  double launch_overhead_us = 4.0;
  double kernel_default_us = 10.0;     ///< fill, fp8_cast
  double small_kernel_us = 3.0;        ///< local_amax, copy, scale_update
  double event_op_us = 0.0;            ///< event_record, stream_wait_event, work_wait
  double alpha_us = 8.0;               ///< flat model: per-collective latency
  double beta_us_per_byte = 1.0 / 100'000.0;  ///< flat model: 100 GB/s bus bandwidth
  std::optional<CollectiveAlgo> algo;  ///< force one algorithm (NCCL_ALGO); none = the tuner's choice
  Topology topology;
  CommInit comm_init = CommInit::split;

  /// Duration of issuing `op` from its host thread.
  double issue_us(const Op& op) const;
  /// Duration of running a non-collective device op on its stream.
  double execute_us(const Op& op) const;
  /// The collective's cost for `members` ranks on `nodes` nodes (`op.cost_us` overrides the
  /// formula when set: all latency).
  CollectiveCost collective(const Op& op, std::size_t members, std::size_t nodes) const;
  /// Its total duration without contention.
  double collective_us(const Op& op, std::size_t members, std::size_t nodes = 1) const {
    return collective(op, members, nodes).total_us();
  }
  /// The cost of `bytes` of one collective kind, for calibration and tests.
  CollectiveCost collective_bytes_cost(OpKind kind, std::uint64_t bytes, std::size_t members, std::size_t nodes) const;
  /// Bytes a collective stands for per member: `op.cost_bytes`, else its largest buffer.
  static std::uint64_t collective_bytes(const Op& op);

  /// Extra device memory per GPU of one more communicator over `members` ranks on `nodes`
  /// nodes, as NCCL allocates it with lazy connection (NCCL_RUNTIME_CONNECT, the default since
  /// 2.22: only the algorithms a run uses connect): a fixed part per communicator, the
  /// resources a split with shared resources reuses, and NCCL_BUFFSIZE-sized buffers per
  /// channel and peer connection (ring: one receiving peer; tree, used across nodes: three).
  std::uint64_t extra_comm_memory_bytes(std::size_t members, std::size_t nodes) const;

  nlohmann::ordered_json to_json() const;
};

/// Fixed device memory of a communicator, as measured on the H200 backend for a 1-rank
/// communicator (no peers): 258 MiB split with shared resources, 386 MiB split or fresh.
inline constexpr std::uint64_t comm_fixed_bytes = 258ull << 20;
inline constexpr std::uint64_t comm_own_resources_bytes = 128ull << 20;
/// Receive buffers of one peer connection on one channel: Simple (NCCL_BUFFSIZE, 4 MiB),
/// LL128 (about 4.7 MiB) and LL (512 KiB).
inline constexpr std::uint64_t connection_buffer_bytes = (4ull << 20) + 4'915'200ull + (512ull << 10);

}  // namespace amaxcheck::sched
