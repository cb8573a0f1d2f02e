// Cost figures of timed runs on the seed question's designs: head-of-line blocking on a shared
// communicator, none on a separate one with concurrent kernels, the same as shared with
// serialized kernels; exposed latency includes the queueing.
#include "cli/cost_metrics.h"

#include <gtest/gtest.h>

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

TEST(CostFigures, exposed_latency_and_memory_grow_with_the_node_count) {
  ProtocolKnobs small = comm_bound(ProtocolName::te_sync, CommChoice::separate, KernelConcurrency::concurrent);
  ProtocolKnobs large = small;
  large.dp = 64;  // 8 nodes of 8
  const auto a = figures_of(small), b = figures_of(large);
  EXPECT_GT(b.exposed_amax_latency_us, a.exposed_amax_latency_us);
  EXPECT_GT(b.extra_comm_memory_bytes, a.extra_comm_memory_bytes);
}

}  // namespace
}  // namespace amaxcheck::cli
