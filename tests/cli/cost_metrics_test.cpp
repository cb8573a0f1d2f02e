// Cost figures of timed runs on the seed question's designs: head-of-line blocking on a shared
// communicator, none on a separate one with concurrent kernels, the same as shared with
// serialized kernels; exposed latency includes the queueing.
#include "cli/cost_metrics.h"

#include <gtest/gtest.h>

#include <vector>

#include "protocols/protocol.h"
#include "scheduler/run.h"

namespace amaxcheck::cli {
namespace {

/// A communication-bound model: 4096-wide layers at 1024 tokens per microbatch, DP 8.
ProtocolKnobs comm_bound(ProtocolName protocol, CommChoice comm, KernelConcurrency kernels) {
  ProtocolKnobs k;
  k.protocol = protocol;
  k.comm = comm;
  k.kernels = kernels;
  k.dp = 8;
  k.iters = 1;
  k.hidden = 4096;
  k.tokens = 1024;
  return k;
}

CostFigures figures_of(const ProtocolKnobs& knobs) {
  const Scenario s = build_protocol(knobs);
  const sched::CostModel cost;
  sched::TimedStrategy timed(s, cost);
  EXPECT_EQ(sched::run_once(s, timed).outcome, sched::RunOutcome::finished);
  return cost_figures(s, timed.timing(), cost, knobs.iters, knobs.comm == CommChoice::separate);
}

TEST(CostFigures, the_amax_reduction_queues_behind_gradient_buckets_on_a_shared_communicator_only) {
  const auto shared = figures_of(comm_bound(ProtocolName::te_async, CommChoice::shared, KernelConcurrency::concurrent));
  const auto separate =
      figures_of(comm_bound(ProtocolName::te_async, CommChoice::separate, KernelConcurrency::concurrent));
  const auto serialized =
      figures_of(comm_bound(ProtocolName::te_async, CommChoice::separate, KernelConcurrency::serialized));
  EXPECT_GT(shared.amax_queued_us, 100);
  EXPECT_DOUBLE_EQ(separate.amax_queued_us, 0);
  EXPECT_NEAR(serialized.amax_queued_us, shared.amax_queued_us, 1e-6)
      << "serialized kernels put the separate communicator's reduction behind the buckets again";
  EXPECT_EQ(shared.extra_comm_memory_bytes, 0u);
  EXPECT_GT(separate.extra_comm_memory_bytes, 386ull << 20);
}

TEST(CostFigures, exposed_amax_latency_is_the_consumers_wait_queueing_included) {
  // te-sync waits at once: the compute stream waits for the whole reduction, queue and all.
  const auto shared = figures_of(comm_bound(ProtocolName::te_sync, CommChoice::shared, KernelConcurrency::concurrent));
  const auto separate =
      figures_of(comm_bound(ProtocolName::te_sync, CommChoice::separate, KernelConcurrency::concurrent));
  EXPECT_GT(shared.amax_queued_us, 100);
  EXPECT_GE(shared.exposed_amax_latency_us, shared.amax_queued_us) << "the wait includes the queueing";
  EXPECT_GT(separate.exposed_amax_latency_us, 0) << "the reduction itself is still waited for";
  EXPECT_LT(separate.exposed_amax_latency_us, shared.exposed_amax_latency_us - 100);
  EXPECT_LT(separate.iteration_time_us, shared.iteration_time_us);
  // te-async hides the reduction behind the next autocast's work: nothing exposed here.
  const auto async =
      figures_of(comm_bound(ProtocolName::te_async, CommChoice::separate, KernelConcurrency::concurrent));
  EXPECT_LT(async.exposed_amax_latency_us, separate.exposed_amax_latency_us);
}

/// The seed question's point with every cost default (25 MiB buckets, 100 us GEMMs, the
/// h100-8x-nvlink-ib400 preset): two modules, two microbatches, one iteration.
ProtocolKnobs seed_point(ProtocolName protocol, CommChoice comm, KernelConcurrency kernels, std::uint32_t dp) {
  ProtocolKnobs k;
  k.protocol = protocol;
  k.comm = comm;
  k.kernels = kernels;
  k.dp = dp;
  k.iters = 1;
  return k;
}

TEST(CostFigures, with_the_defaults_the_shared_communicator_blocks_the_amax_reduction_behind_a_bucket) {
  // DP 64 is 8 nodes: a 25 MiB bucket across the network outlasts the module's backward that
  // follows it, so the amax reduction issued after that backward queues behind it.
  for (std::uint32_t dp : {64u, 256u}) {
    const auto shared = figures_of(seed_point(ProtocolName::te_async, CommChoice::shared, KernelConcurrency::concurrent, dp));
    const auto separate =
        figures_of(seed_point(ProtocolName::te_async, CommChoice::separate, KernelConcurrency::concurrent, dp));
    const auto serialized =
        figures_of(seed_point(ProtocolName::te_async, CommChoice::separate, KernelConcurrency::serialized, dp));
    EXPECT_GT(shared.amax_queued_us, 10) << "dp " << dp;
    EXPECT_DOUBLE_EQ(separate.amax_queued_us, 0) << "dp " << dp;
    EXPECT_NEAR(serialized.amax_queued_us, shared.amax_queued_us, 1e-6) << "dp " << dp;
    EXPECT_LT(separate.iteration_time_us, shared.iteration_time_us) << "dp " << dp;
  }
}

TEST(CostFigures, exposed_latency_grows_with_dp_and_nodes_by_what_the_reductions_cost_more) {
  // te-sync on a separate communicator with concurrent kernels: nothing queues, so each of
  // the 2 * microbatches waited reductions exposes exactly its own duration, and the exposed
  // latency grows by that many times the growth of one reduction (ring latency within a node,
  // the tree's log2 of the nodes across them).
  const std::vector<std::uint32_t> dps{2, 8, 16, 64, 256};
  std::vector<CostFigures> figures;
  for (std::uint32_t dp : dps) {
    figures.push_back(figures_of(seed_point(ProtocolName::te_sync, CommChoice::separate, KernelConcurrency::concurrent, dp)));
  }
  const double waited = 2.0 * ProtocolKnobs{}.microbatches;
  for (std::size_t i = 1; i < dps.size(); ++i) {
    const CostFigures& a = figures[i - 1];
    const CostFigures& b = figures[i];
    EXPECT_GT(b.amax_collective_us, a.amax_collective_us) << "dp " << dps[i];
    EXPECT_NEAR(b.exposed_amax_latency_us - a.exposed_amax_latency_us,
                waited * (b.amax_collective_us - a.amax_collective_us), 0.5)
        << "dp " << dps[i - 1] << " -> " << dps[i];
  }
  // Memory: the ring's peer buffers on one node, the tree's too once the ranks span nodes
  // (lazy connection), then flat: the peers per channel do not grow with the node count.
  const sched::CostModel cost;
  EXPECT_EQ(figures[1].extra_comm_memory_bytes, cost.extra_comm_memory_bytes(8, 1));
  EXPECT_GT(figures[2].extra_comm_memory_bytes, figures[1].extra_comm_memory_bytes);
  EXPECT_EQ(figures[2].extra_comm_memory_bytes, cost.extra_comm_memory_bytes(16, 2));
  EXPECT_EQ(figures[4].extra_comm_memory_bytes, figures[2].extra_comm_memory_bytes);
}

TEST(CostFigures, a_shared_communicator_exposes_the_bucket_ahead_of_the_amax_reduction_too) {
  // te-sync on the shared communicator waits for the bucket in front: more exposed than on a
  // separate one at every DP that queues, and the gap is the queueing (less the little
  // bandwidth the separate one's reduction loses sharing links with that bucket).
  for (std::uint32_t dp : {64u, 256u}) {
    const auto shared = figures_of(seed_point(ProtocolName::te_sync, CommChoice::shared, KernelConcurrency::concurrent, dp));
    const auto separate =
        figures_of(seed_point(ProtocolName::te_sync, CommChoice::separate, KernelConcurrency::concurrent, dp));
    EXPECT_GT(shared.amax_queued_us, 0) << "dp " << dp;
    EXPECT_GT(shared.exposed_amax_latency_us, separate.exposed_amax_latency_us + 10) << "dp " << dp;
    EXPECT_NEAR(shared.exposed_amax_latency_us, separate.exposed_amax_latency_us + shared.amax_queued_us, 1.0)
        << "dp " << dp;
  }
}

}  // namespace
}  // namespace amaxcheck::cli
