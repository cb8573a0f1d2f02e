#include "scheduler/cost_model.h"


#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace amaxcheck::sched {
namespace {

constexpr std::size_t kAlgos = 3, kProtos = 3;
constexpr double nvlink_ll_hop_us = 0.45;
using Table = std::array<std::array<double, kProtos>, kAlgos>;  // [ring, tree, nvls][LL, LL128, Simple]

// Latencies in us, in the layout of NCCL's tuner (base per collective, then per hop on each
// kind of link); NVLS runs Simple only. Values as published in NCCL 2.2x's tuning.cc, but for
// the LL hop on NVLink: NCCL's 0.6 us predicts 15.0 us for an 8-byte all-reduce on 8 NVSwitch
// GPUs, nccl-tests measures 12.5 us on 8 Hopper GPUs (README, calibration), and 0.45 us gives
// 12.9 us.
constexpr Table base_latency{{{6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}, {0, 0, 25.0}}};
constexpr Table nvlink_hop{{{nvlink_ll_hop_us, 1.9, 3.4}, {nvlink_ll_hop_us, 1.25, 4.0}, {0, 0, 0}}};
constexpr Table pci_hop{{{1.0, 2.5, 5.7}, {1.0, 1.9, 4.0}, {0, 0, 0}}};
constexpr Table net_hop{{{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}, {0, 0, 0}}};
/// Bandwidth efficiency of each protocol: LL moves 4 data bytes per 16-byte line (NCCL's 1/4
/// for rings), LL128 120 of 128 bytes (0.92), Simple all.
constexpr std::array<double, kProtos> proto_efficiency{0.25, 0.92, 1.0};

double log2_nodes(std::size_t nodes) { return nodes <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(nodes))); }

}  // namespace

const char* to_string(CollectiveAlgo algo) {
  switch (algo) {
    case CollectiveAlgo::ring: return "ring";
    case CollectiveAlgo::tree: return "tree";
    case CollectiveAlgo::nvls: return "nvls";
  }
  return "?";
}

const char* to_string(CollectiveProto proto) {
  switch (proto) {
    case CollectiveProto::ll: return "LL";
    case CollectiveProto::ll128: return "LL128";
    case CollectiveProto::simple: return "Simple";
  }
  return "?";
}

const char* to_string(CommInit init) {
  switch (init) {
    case CommInit::split_shared: return "split-shared";
    case CommInit::split: return "split";
    case CommInit::fresh: return "fresh";
  }
  return "?";
}

std::optional<Topology> topology_preset(const std::string& name) {
  Topology t;
  t.name = name;
  if (name == "h100-8x-nvlink-ib400" || name == "h200-8x-nvlink-ib400") {
    // Topology's defaults: NVLink 4 through NVSwitch (16 channels of 23.5 GB/s: a ring bus
    // bandwidth of 376 GB/s, NVLS 470 GB/s), one 400 Gb/s NIC per GPU (16 channels over 8
    // NICs: 24 GB/s each, 48 GB/s per NIC). The H200 has the same links; its larger, faster
    // HBM does not enter this model, its GEMM rate does.
    if (name.starts_with("h200")) t.gemm_tflops = 650;
    return t;
  }
  if (name == "pcie") {
    // Eight GPUs on PCIe Gen5 without NVLink: two channels of 20 GB/s, no NVLS, no LL128;
    // 100 Gb/s Ethernet between nodes.
    t.intra_pcie = true;
    t.nvls = false;
    t.channels = 2;
    t.intra_gbps_per_channel = 20;
    t.inter_gbps_per_channel = 6;
    t.gemm_tflops = 400;
    return t;
  }
  if (name == "flat") {
    t.flat = true;
    t.nvls = false;
    return t;
  }
  return std::nullopt;
}

std::string topology_preset_names() { return "h100-8x-nvlink-ib400|h200-8x-nvlink-ib400|pcie|flat"; }

double CostModel::issue_us(const Op& op) const { return is_device_op(op.kind) ? launch_overhead_us : 0.0; }

double CostModel::execute_us(const Op& op) const {
  if (op.cost_us > 0) return op.cost_us;
  if (op_kind_info(op.kind).place != OpPlace::stream) return 0.0;  // host ops; collectives: collective()
  if (op.cost_flops > 0) return static_cast<double>(op.cost_flops) / (topology.gemm_tflops * 1e6);
  if (!moves_data(op.kind)) return event_op_us;
  switch (op.kind) {
    case OpKind::fill:
    case OpKind::fp8_cast: return kernel_default_us;
    default: return small_kernel_us;  // local_amax, copy, scale_update: memory-light kernels
  }
}

std::uint64_t CostModel::collective_bytes(const Op& op) {
  if (op.cost_bytes > 0) return op.cost_bytes;
  std::uint64_t elements = 0;
  for (const Range& r : op.reads) elements = std::max<std::uint64_t>(elements, r.count);
  for (const Range& r : op.writes) elements = std::max<std::uint64_t>(elements, r.count);
  const std::uint64_t element_bytes = op.dtype == Dtype::bf16 ? 2 : 4;
  return elements * element_bytes;
}

CollectiveCost CostModel::collective(const Op& op, std::size_t members, std::size_t nodes) const {
  if (op.cost_us > 0) return CollectiveCost{CollectiveAlgo::ring, CollectiveProto::simple, op.cost_us, 0};
  return collective_bytes_cost(op.kind, collective_bytes(op), members, nodes);
}

CollectiveCost CostModel::collective_bytes_cost(OpKind kind, std::uint64_t bytes, std::size_t members,
                                                std::size_t nodes) const {
  const double n = static_cast<double>(std::max<std::size_t>(members, 1));
  const double b = static_cast<double>(bytes);
  if (topology.flat) {
    const CollectiveAlgo a = algo.value_or(CollectiveAlgo::ring);
    double factor = 1.0;
    if (a == CollectiveAlgo::tree) factor = std::log2(n);
    else if (kind == OpKind::all_reduce) factor = 2.0 * (n - 1.0) / n;
    else if (kind == OpKind::all_gather || kind == OpKind::reduce_scatter) factor = (n - 1.0) / n;
    return CollectiveCost{a, CollectiveProto::simple, alpha_us, beta_us_per_byte * b * factor};
  }
  if (members <= 1) return CollectiveCost{CollectiveAlgo::ring, CollectiveProto::simple, 0, 0};  // NCCL: a no-op
  const double N = static_cast<double>(std::clamp<std::size_t>(nodes, 1, members));
  const bool all_reduce = kind == OpKind::all_reduce;
  // Ring steps: 2(n-1) for an all-reduce, n-1 for all-gather / reduce-scatter, n for a broadcast;
  // the steps that cross nodes likewise in N.
  const double steps = all_reduce ? 2 * (n - 1) : kind == OpKind::broadcast ? n : n - 1;
  const double inter_steps = all_reduce ? 2 * (N - 1) : kind == OpKind::broadcast ? N : N - 1;
  const Table& intra_hop = topology.intra_pcie ? pci_hop : nvlink_hop;
  const double speed = N > 1 ? topology.inter_gbps_per_channel : topology.intra_gbps_per_channel;
  const double bus_bw = static_cast<double>(topology.channels) * speed;

  CollectiveCost best;
  double best_time = std::numeric_limits<double>::infinity();
  for (std::size_t a = 0; a < kAlgos; ++a) {
    const auto algorithm = static_cast<CollectiveAlgo>(a);
    if (algo && *algo != algorithm) continue;
    // Trees and NVLS run all-reduces only; NVLS needs NVSwitch and one node.
    if (algorithm != CollectiveAlgo::ring && !all_reduce) continue;
    if (algorithm == CollectiveAlgo::nvls && (!topology.nvls || N > 1)) continue;
    for (std::size_t p = 0; p < kProtos; ++p) {
      const auto proto = static_cast<CollectiveProto>(p);
      if (algorithm == CollectiveAlgo::nvls && proto != CollectiveProto::simple) continue;
      if (proto == CollectiveProto::ll128 && topology.intra_pcie) continue;  // NCCL enables LL128 on NVLink only
      double intra = intra_hop[a][p];
      const double inter = net_hop[a][p];
      if (N > 1 && proto == CollectiveProto::ll) intra *= 1.8;  // NCCL's LL penalty across nodes
      double latency = base_latency[a][p];
      double alg_bw = 0;
      switch (algorithm) {
        case CollectiveAlgo::ring:
          latency += (steps - inter_steps) * intra + inter_steps * inter;
          alg_bw = bus_bw * proto_efficiency[p] * (n / steps);
          break;
        case CollectiveAlgo::tree:
          latency += 2 * ((n / N - 1) * intra + log2_nodes(nodes) * inter);
          alg_bw = bus_bw * 0.9 * proto_efficiency[p] * 0.5;
          break;
        case CollectiveAlgo::nvls:
          latency += intra;
          alg_bw = topology.nvls_busbw_gbps * n / (2 * (n - 1));  // nccl-tests' busbw -> algbw
          break;
      }
      const double transfer = b / (1000.0 * alg_bw);
      if (latency + transfer < best_time) {
        best_time = latency + transfer;
        best = CollectiveCost{algorithm, proto, latency, transfer};
      }
    }
  }
  if (algo && best_time == std::numeric_limits<double>::infinity()) {
    CostModel tuner = *this;  // a forced algorithm that cannot run this collective: NCCL falls back
    tuner.algo.reset();
    return tuner.collective_bytes_cost(kind, bytes, members, nodes);
  }
  return best;
}

std::uint64_t CostModel::extra_comm_memory_bytes(std::size_t members, std::size_t nodes) const {
  std::uint64_t bytes = comm_fixed_bytes;
  if (comm_init == CommInit::split_shared) return bytes;  // channels, buffers and proxy are the parent's
  bytes += comm_own_resources_bytes;
  if (members <= 1) return bytes;
  // Lazy connection: the ring connects (one receiving peer per channel); across nodes the
  // tree connects too (up to three peers: parent and two children).
  const std::uint64_t peers = 1 + (nodes > 1 ? 3 : 0);
  return bytes + static_cast<std::uint64_t>(topology.channels) * peers * connection_buffer_bytes;
}

nlohmann::ordered_json CostModel::to_json() const {
  nlohmann::ordered_json j;
  j["launch_overhead_us"] = launch_overhead_us;
  j["kernel_default_us"] = kernel_default_us;
  j["small_kernel_us"] = small_kernel_us;
  j["event_op_us"] = event_op_us;
  j["topology"] = topology.name;
  if (topology.flat) {
    j["alpha_us"] = alpha_us;
    j["beta_us_per_byte"] = beta_us_per_byte;
  } else {
    j["channels"] = topology.channels;
    j["intra_gbps_per_channel"] = topology.intra_gbps_per_channel;
    j["inter_gbps_per_channel"] = topology.inter_gbps_per_channel;
    j["nvls"] = topology.nvls;
    j["gemm_tflops"] = topology.gemm_tflops;
  }
  j["algo"] = algo ? to_string(*algo) : "auto";
  j["comm_init"] = to_string(comm_init);
  return j;
}

}  // namespace amaxcheck::sched
