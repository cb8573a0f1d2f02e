// The cost model's formulas (NCCL's structure), its calibration against published nccl-tests
// figures, the extra communicator's memory, and contention between concurrent collectives.
#include "scheduler/cost_model.h"

#include <gtest/gtest.h>

#include "model/builder.h"
#include "scheduler/run.h"
#include "scheduler/timed_strategy.h"

namespace amaxcheck::sched {
namespace {

CostModel preset(const std::string& name) {
  CostModel cost;
  cost.topology = *topology_preset(name);
  return cost;
}

/// nccl-tests' bus bandwidth of an all-reduce: algbw * 2(n-1)/n, in GB/s.
double all_reduce_busbw(const CostModel& cost, std::uint64_t bytes, std::size_t n, std::size_t nodes) {
  const double us = cost.collective_bytes_cost(OpKind::all_reduce, bytes, n, nodes).total_us();
  return static_cast<double>(bytes) / (us * 1000.0) * 2.0 * static_cast<double>(n - 1) / static_cast<double>(n);
}

TEST(CostModel, a_ring_all_reduce_pays_base_latency_plus_one_hop_per_step_intra_and_inter_node) {
  CostModel cost = preset("h100-8x-nvlink-ib400");
  cost.algo = CollectiveAlgo::ring;
  // 8 ranks on one node: 14 NVLink steps of 0.45 us on LL after its 6.6 us base.
  const CollectiveCost one_node = cost.collective_bytes_cost(OpKind::all_reduce, 8, 8, 1);
  EXPECT_EQ(one_node.proto, CollectiveProto::ll);
  EXPECT_NEAR(one_node.latency_us, 6.6 + 14 * 0.45, 1e-9);
  // 16 ranks on two nodes: 2 of the 30 steps cross the network (2.7 us), the other 28 pay
  // NVLink's LL hop times NCCL's 1.8 penalty across nodes.
  const CollectiveCost two_nodes = cost.collective_bytes_cost(OpKind::all_reduce, 8, 16, 2);
  EXPECT_NEAR(two_nodes.latency_us, 6.6 + 28 * 0.45 * 1.8 + 2 * 2.7, 1e-9);
  // Bandwidth: 16 channels; a ring all-reduce's algbw is busBw * n / (2(n-1)).
  const CollectiveCost big = cost.collective_bytes_cost(OpKind::all_reduce, 1ull << 30, 8, 1);
  EXPECT_EQ(big.proto, CollectiveProto::simple);
  EXPECT_NEAR(big.transfer_us, static_cast<double>(1ull << 30) / (1000.0 * 16 * 23.5 * 8 / 14), 1e-6);
}

TEST(CostModel, a_tree_grows_with_the_log_of_the_nodes_and_wins_small_messages_at_scale) {
  CostModel cost = preset("h100-8x-nvlink-ib400");
  cost.algo = CollectiveAlgo::tree;
  const CollectiveCost tree = cost.collective_bytes_cost(OpKind::all_reduce, 8, 1024, 128);
  EXPECT_NEAR(tree.latency_us, 6.8 + 2 * (7 * 0.45 * 1.8 + 7 * 5.0), 1e-9);
  cost.algo.reset();
  EXPECT_EQ(cost.collective_bytes_cost(OpKind::all_reduce, 8, 1024, 128).algo, CollectiveAlgo::tree)
      << "a ring's 2046 steps lose to a tree's 2 log2(128) network hops";
  EXPECT_EQ(cost.collective_bytes_cost(OpKind::all_reduce, 8, 8, 1).algo, CollectiveAlgo::ring);
  EXPECT_EQ(cost.collective_bytes_cost(OpKind::all_reduce, 1ull << 30, 8, 1).algo, CollectiveAlgo::nvls)
      << "NVLink SHARP for large messages on one NVSwitch node";
  EXPECT_NE(cost.collective_bytes_cost(OpKind::all_reduce, 1ull << 30, 16, 2).algo, CollectiveAlgo::nvls)
      << "NVLS is this model's single-node algorithm";
  EXPECT_EQ(cost.collective_bytes_cost(OpKind::all_gather, 1ull << 30, 8, 1).algo, CollectiveAlgo::ring)
      << "trees and NVLS run all-reduces only";
}

TEST(CostModel, the_tuner_picks_the_fastest_algorithm_and_protocol_for_each_size) {
  const CostModel cost = preset("h100-8x-nvlink-ib400");
  for (std::uint64_t bytes = 8; bytes <= (1ull << 32); bytes *= 4) {
    for (std::size_t nodes : {1u, 2u, 16u}) {
      const CollectiveCost chosen = cost.collective_bytes_cost(OpKind::all_reduce, bytes, 8 * nodes, nodes);
      for (CollectiveAlgo a : {CollectiveAlgo::ring, CollectiveAlgo::tree, CollectiveAlgo::nvls}) {
        CostModel forced = cost;
        forced.algo = a;
        const CollectiveCost other = forced.collective_bytes_cost(OpKind::all_reduce, bytes, 8 * nodes, nodes);
        EXPECT_LE(chosen.total_us(), other.total_us() + 1e-9) << bytes << " bytes, " << nodes << " nodes, " << to_string(a);
      }
    }
  }
}

// Calibration against published nccl-tests all_reduce_perf figures (the README's table gives
// each source). busbw is nccl-tests' bus bandwidth, algbw * 2(n-1)/n.
TEST(Calibration, one_nvswitch_node_reaches_the_published_nvls_and_ring_bus_bandwidth) {
  // NVIDIA (NVIDIA/nccl-tests#212, #290): 8x H100 reach a peak busbw of about 480 GB/s with
  // NVLink SHARP (476 GB/s measured), and about 370 GB/s with NCCL_ALGO=RING.
  for (const char* name : {"h100-8x-nvlink-ib400", "h200-8x-nvlink-ib400"}) {
    CostModel cost = preset(name);
    EXPECT_EQ(cost.collective_bytes_cost(OpKind::all_reduce, 8ull << 30, 8, 1).algo, CollectiveAlgo::nvls);
    EXPECT_NEAR(all_reduce_busbw(cost, 8ull << 30, 8, 1), 476, 0.2 * 476) << name;
    cost.algo = CollectiveAlgo::ring;
    EXPECT_NEAR(all_reduce_busbw(cost, 8ull << 30, 8, 1), 370, 0.2 * 370) << name;
  }
}

TEST(Calibration, across_nodes_a_ring_reaches_the_published_bandwidth_of_eight_400g_nics) {
  // NVIDIA (NVIDIA/nccl-tests#290): with NDR 400 Gb/s, a ring all-reduce across H100 nodes
  // gets 46-48 GB/s per NIC, eight NICs per node: 368-384 GB/s busbw.
  CostModel cost = preset("h100-8x-nvlink-ib400");
  cost.algo = CollectiveAlgo::ring;
  for (std::size_t nodes : {2u, 16u}) {
    EXPECT_NEAR(all_reduce_busbw(cost, 8ull << 30, 8 * nodes, nodes), 376, 0.2 * 376) << nodes << " nodes";
  }
}

TEST(Calibration, pcie_reaches_the_published_bus_bandwidth) {
  // 8x H100 PCIe without NVLink: 35-45 GB/s (alayanew, NCCL-tests in practice).
  EXPECT_NEAR(all_reduce_busbw(preset("pcie"), 8ull << 30, 8, 1), 40, 0.2 * 40);
}

TEST(Calibration, a_small_all_reduce_on_one_nvswitch_node_takes_the_published_latency) {
  // nccl-tests all_reduce_perf, 8 bytes on 8 Hopper GPUs through NVSwitch: 12.49 us
  // (deepseek-ai/DeepEP#303, 8x H20, NVLink 4 as on H100).
  for (const char* name : {"h100-8x-nvlink-ib400", "h200-8x-nvlink-ib400"}) {
    const double us = preset(name).collective_bytes_cost(OpKind::all_reduce, 8, 8, 1).total_us();
    EXPECT_NEAR(us, 12.49, 0.2 * 12.49) << name;
  }
}

TEST(Calibration, a_small_all_reduce_across_nodes_takes_the_published_latency) {
  // nccl-tests all_reduce_perf, 8 bytes in place, 8x H100 SXM and 8x 400 Gb/s NDR per node,
  // NCCL 2.26.2 (NVIDIA/nccl-tests#309, which NVIDIA's reply calls healthy): 24.70 us on 2
  // bare-metal nodes, 34.75 us on 4 nodes (VMs, the same NICs).
  for (const char* name : {"h100-8x-nvlink-ib400", "h200-8x-nvlink-ib400"}) {
    const CostModel cost = preset(name);
    EXPECT_NEAR(cost.collective_bytes_cost(OpKind::all_reduce, 8, 16, 2).total_us(), 24.70, 0.2 * 24.70) << name;
    EXPECT_NEAR(cost.collective_bytes_cost(OpKind::all_reduce, 8, 32, 4).total_us(), 34.75, 0.2 * 34.75) << name;
  }
}

TEST(Calibration, a_small_all_reduce_on_pcie_with_peer_to_peer_takes_the_published_latency) {
  // nccl-tests all_reduce_perf, 8 bytes in place on 8 GPUs on PCIe Gen5 with peer-to-peer,
  // no NVLink: 24.82 us (aikitoria/open-gpu-kernel-modules README, 8x RTX 5090, NCCL 2.29.7;
  // the one published figure found, see the README's caveats).
  EXPECT_NEAR(preset("pcie").collective_bytes_cost(OpKind::all_reduce, 8, 8, 1).total_us(), 24.82, 0.2 * 24.82);
}

TEST(Calibration, the_default_cost_model_is_the_default_preset) {
  const Topology plain;
  const Topology h100 = *topology_preset("h100-8x-nvlink-ib400");
  EXPECT_EQ(plain.name, h100.name);
  EXPECT_EQ(plain.channels, h100.channels);
  EXPECT_EQ(plain.intra_gbps_per_channel, h100.intra_gbps_per_channel);
  EXPECT_EQ(plain.inter_gbps_per_channel, h100.inter_gbps_per_channel);
  EXPECT_EQ(plain.nvls_busbw_gbps, h100.nvls_busbw_gbps);
  EXPECT_EQ(plain.gemm_tflops, h100.gemm_tflops);
  EXPECT_EQ(CostModel{}.to_json(), preset("h100-8x-nvlink-ib400").to_json());
}

TEST(CostModel, the_flat_model_keeps_alpha_plus_beta) {
  CostModel cost = preset("flat");
  cost.alpha_us = 3;
  cost.beta_us_per_byte = 0.25;
  EXPECT_DOUBLE_EQ(cost.collective_bytes_cost(OpKind::all_reduce, 40, 4, 4).total_us(), 3 + 0.25 * 40 * 1.5);
}

TEST(CostModel, cost_bytes_stand_for_the_collective_and_cost_flops_for_the_kernel) {
  const CostModel cost = preset("h100-8x-nvlink-ib400");
  Op op = ScenarioBuilder::all_reduce(0, 0, Range{0, 0, 4}, Range{0, 0, 4});
  EXPECT_EQ(CostModel::collective_bytes(op), 16u);
  op.cost_bytes = 25ull << 20;
  EXPECT_EQ(CostModel::collective_bytes(op), 25ull << 20);
  EXPECT_GT(cost.collective_us(op, 8, 1), cost.collective_bytes_cost(OpKind::all_reduce, 16, 8, 1).total_us() + 50);
  Op gemm = ScenarioBuilder::fill(0, Range{0, 0, 1}, {1.0f});
  gemm.cost_flops = 6'000'000'000;  // 6 GFLOP at 600 TFLOP/s
  EXPECT_NEAR(cost.execute_us(gemm), 10.0, 1e-9);
}

TEST(CommMemory, matches_the_h200_measurement_for_one_rank_and_grows_with_nodes_and_channels) {
  CostModel cost = preset("h200-8x-nvlink-ib400");
  cost.comm_init = CommInit::split_shared;
  EXPECT_EQ(cost.extra_comm_memory_bytes(1, 1), 258ull << 20) << "measured: 258 MiB split with shared resources";
  cost.comm_init = CommInit::split;
  EXPECT_EQ(cost.extra_comm_memory_bytes(1, 1), 386ull << 20) << "measured: 386 MiB split";
  cost.comm_init = CommInit::fresh;
  EXPECT_EQ(cost.extra_comm_memory_bytes(1, 1), 386ull << 20) << "measured: 386 MiB fresh init";
  const std::uint64_t one_node = cost.extra_comm_memory_bytes(8, 1);
  const std::uint64_t many_nodes = cost.extra_comm_memory_bytes(1024, 128);
  EXPECT_EQ(one_node, (386ull << 20) + 16 * connection_buffer_bytes) << "ring: one peer per channel";
  EXPECT_EQ(many_nodes, (386ull << 20) + 16 * 4 * connection_buffer_bytes) << "ring and tree across nodes";
  cost.topology.channels = 32;
  EXPECT_GT(cost.extra_comm_memory_bytes(8, 1), one_node);
  cost.comm_init = CommInit::split_shared;
  EXPECT_EQ(cost.extra_comm_memory_bytes(1024, 128), 258ull << 20) << "a shared split reuses the parent's buffers";
}

/// Two ranks, each with an all-reduce of `bytes` on communicator A (stream a) and on B (stream b),
/// issued back to back: the two run at once on the same ranks.
Scenario two_concurrent_all_reduces(std::uint64_t bytes, bool same_comm) {
  ScenarioBuilder b("concurrent");
  const RankId r0 = b.rank(), r1 = b.rank();
  b.scenario().ranks[1].device = 1;  // one node
  const CommId a = b.comm("a", {r0, r1});
  const CommId c = same_comm ? a : b.comm("b", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId sa = b.stream(r, "a"), sb = b.stream(r, "b");
    const BufferId x = b.buffer(r, "x", 1), y = b.buffer(r, "y", 1);
    b.op(r, t, ScenarioBuilder::all_reduce(sa, a, Range{x, 0, 1}, Range{x, 0, 1}, "first")).cost_bytes = bytes;
    b.op(r, t, ScenarioBuilder::all_reduce(sb, c, Range{y, 0, 1}, Range{y, 0, 1}, "second")).cost_bytes = bytes;
  }
  return b.build();
}

double end_of(const TimedRun& run, const std::string& name) {
  double end = 0;
  for (const OpTiming& op : run.ops) {
    if (op.name == name) end = std::max(end, op.end_us);
  }
  return end;
}

TEST(Contention, concurrent_collectives_on_different_comms_share_their_ranks_bandwidth) {
  CostModel cost = preset("h100-8x-nvlink-ib400");
  cost.algo = CollectiveAlgo::ring;
  const std::uint64_t bytes = 100ull << 20;
  const CollectiveCost alone = cost.collective_bytes_cost(OpKind::all_reduce, bytes, 2, 1);
  const Scenario s = two_concurrent_all_reduces(bytes, false);
  TimedStrategy timed(s, cost);
  ASSERT_EQ(run_once(s, timed).outcome, RunOutcome::finished);
  const double first = end_of(timed.timing(), "first"), second = end_of(timed.timing(), "second");
  // The second starts one launch after the first, while it runs: half the bandwidth.
  EXPECT_NEAR(second - first, cost.launch_overhead_us + alone.transfer_us, 1e-6);
  EXPECT_GT(second, first + alone.transfer_us) << "never for free";
  // On one communicator they queue instead: the second starts when the first completes.
  const Scenario q = two_concurrent_all_reduces(bytes, true);
  TimedStrategy queued(q, cost);
  ASSERT_EQ(run_once(q, queued).outcome, RunOutcome::finished);
  EXPECT_NEAR(end_of(queued.timing(), "second") - end_of(queued.timing(), "first"), alone.total_us(), 1e-6);
}

TEST(Topology, a_device_index_that_does_not_grow_starts_a_node) {
  ScenarioBuilder b;
  for (std::uint32_t d : {0u, 1u, 2u, 0u, 1u, 0u}) b.scenario().ranks.push_back(Rank{"r", d, {}, {}, {}, {}, {}});
  EXPECT_EQ(nodes_of_ranks(b.build()), (std::vector<std::uint32_t>{0, 0, 0, 1, 1, 2}));
}

}  // namespace
}  // namespace amaxcheck::sched
