#pragma once
// Scenarios and schedules for the GPU tests (header-only, test-local).
#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "model/builder.h"

namespace amaxcheck::gpu::testing {

/// The seed hazard in miniature: rank 0 all-reduces its amax buffer (3) on a side stream and
/// copies it back on the compute stream, waiting before or after the copy; rank 1 holds 5.
inline Scenario async_copy_back(bool wait_before_copy) {
  ScenarioBuilder b("async_copy_back");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId comm = b.comm("amax", {r0, r1});
  const ThreadId t0 = b.thread(r0, "main");
  const StreamId compute = b.stream(r0, "compute"), nccl = b.stream(r0, "nccl");
  const EventId done = b.event(r0, "allreduce_done");
  const BufferId global0 = b.buffer(r0, "amax_global", 1, {3.0f});
  const BufferId hist0 = b.buffer(r0, "amax_history", 1);
  b.op(r0, t0, ScenarioBuilder::all_reduce(nccl, comm, {global0, 0, 1}, {global0, 0, 1}, "amax_reduce"));
  b.op(r0, t0, ScenarioBuilder::record(nccl, done));
  auto copy = ScenarioBuilder::copy(compute, {global0, 0, 1}, {hist0, 0, 1}, "copy_back");
  auto wait = ScenarioBuilder::wait(compute, done, "handle.wait", OpKind::work_wait);
  b.op(r0, t0, wait_before_copy ? wait : copy);
  b.op(r0, t0, wait_before_copy ? copy : wait);
  const ThreadId t1 = b.thread(r1, "main");
  const StreamId s1 = b.stream(r1, "nccl");
  const BufferId global1 = b.buffer(r1, "amax_global", 1, {5.0f});
  b.op(r1, t1, ScenarioBuilder::all_reduce(s1, comm, {global1, 0, 1}, {global1, 0, 1}, "amax_reduce"));
  Scenario s = b.build();
  s.checks.push_back(ReplicaCheck{"copied amax", {{r0, {hist0, 0, 1}}}, {}});
  s.checks.push_back(ReplicaCheck{"reduced amax", {{r0, {global0, 0, 1}}, {r1, {global1, 0, 1}}}, {}});
  return s;
}

/// Every kernel kind on one rank: fill, local amax, FP8 cast, concatenate / split copies with
/// an overlapping pair, the scale update, and an all-reduce over a 1-rank communicator split
/// from another.
inline Scenario every_kernel_on_one_rank(std::uint32_t tensor_size) {
  ScenarioBuilder b("every kernel");
  const RankId r = b.rank();
  const CommId dp = b.comm("dp", {r});
  const CommId amax = b.comm("amax", {r});
  const ThreadId t = b.thread(r, "main");
  const StreamId s = b.stream(r, "compute");
  const BufferId x = b.buffer(r, "activations", tensor_size);
  const BufferId q = b.buffer(r, "fp8_out", tensor_size);
  const BufferId global = b.buffer(r, "amax_global", 2);
  const BufferId history = b.buffer(r, "amax_history", 3 * 2);
  const BufferId scale = b.buffer(r, "scale", 2, {1.0f, 1.0f});
  const BufferId scale_inv = b.buffer(r, "scale_inv", 2);
  std::vector<float> values(tensor_size);
  for (std::uint32_t i = 0; i < tensor_size; ++i) {
    values[i] = static_cast<float>((i * 2654435761u) % 100003) / 97.0f - 500.0f;
  }
  b.op(r, t, ScenarioBuilder::fill(s, {x, 0, tensor_size}, values, "forward"));
  Op amax_op = ScenarioBuilder::copy(s, {x, 0, tensor_size}, {global, 0, 1}, "local_amax");
  amax_op.kind = OpKind::local_amax;
  b.op(r, t, amax_op);
  b.op(r, t, ScenarioBuilder::fill(s, {global, 1, 1}, {0.75f}, "second amax"));
  b.op(r, t, ScenarioBuilder::all_reduce(s, dp, {global, 0, 2}, {global, 0, 2}, "grad_like", ReduceOp::sum));
  b.op(r, t, ScenarioBuilder::all_reduce(s, amax, {global, 0, 2}, {global, 0, 2}, "amax_reduce"));
  b.op(r, t, ScenarioBuilder::copy(s, {global, 0, 2}, {history, 0, 2}, "copy_back"));
  Op update;
  update.kind = OpKind::scale_update;
  update.name = "scale_update";
  update.stream = s;
  update.scale = ScaleUpdateParams{2, 3, HistoryAlgo::max, 1, Fp8Format::e4m3};
  update.reads = {{history, 0, 6}, {scale, 0, 2}};
  update.writes = {{history, 0, 6}, {scale, 0, 2}, {scale_inv, 0, 2}};
  b.op(r, t, update);
  Op cast;
  cast.kind = OpKind::fp8_cast;
  cast.name = "cast";
  cast.stream = s;
  cast.format = Fp8Format::e4m3;
  cast.reads = {{x, 0, tensor_size}, {scale, 0, 1}};
  cast.writes = {{q, 0, tensor_size}};
  b.op(r, t, cast);
  // Overlapping pairs: shift the history down by one element, then split it into scale_inv.
  Op shift = ScenarioBuilder::copy(s, {history, 0, 5}, {history, 1, 5}, "shift");
  shift.reads.push_back({history, 2, 1});
  shift.writes.push_back({scale_inv, 1, 1});
  b.op(r, t, shift);
  Scenario out = b.build();
  out.checks.push_back(ReplicaCheck{"fp8 tensor", {{r, {q, 0, tensor_size}}}, {}});
  out.checks.push_back(ReplicaCheck{"amax_history", {{r, {history, 0, 6}}}, {}});
  out.checks.push_back(ReplicaCheck{"scale", {{r, {scale, 0, 2}}}, {}});
  out.checks.push_back(ReplicaCheck{"scale_inv", {{r, {scale_inv, 0, 2}}}, {}});
  return out;
}

/// `ranks` members of a DP communicator and of a separate amax communicator over the same ranks
/// (derived from the DP one: GpuRunOptions::derived_comms). Rank r holds values that differ per
/// rank, sums them over DP (a gradient bucket) and takes the MAX of its two amaxes over the amax
/// communicator: a real cross-rank reduction whenever the members are on one GPU or several.
inline Scenario dp_sum_and_amax_max(std::uint32_t ranks) {
  ScenarioBuilder b("dp sum and amax max");
  std::vector<RankId> all;
  for (std::uint32_t i = 0; i < ranks; ++i) all.push_back(b.rank());
  const CommId dp = b.comm("dp", all);
  const CommId amax = b.comm("amax", all);
  std::vector<ReplicaCheck::Replica> grads, amaxes;
  for (RankId r : all) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const float k = static_cast<float>(r);
    const BufferId grad = b.buffer(r, "grad", 3, {k, 0.5f * k, -k});
    const BufferId global = b.buffer(r, "amax_global", 2, {k * 1.5f, 100.0f - k});
    b.op(r, t, ScenarioBuilder::all_reduce(s, dp, {grad, 0, 3}, {grad, 0, 3}, "grad_bucket", ReduceOp::sum));
    b.op(r, t, ScenarioBuilder::all_reduce(s, amax, {global, 0, 2}, {global, 0, 2}, "amax_reduce"));
    grads.push_back({r, {grad, 0, 3}});
    amaxes.push_back({r, {global, 0, 2}});
  }
  Scenario out = b.build();
  out.checks.push_back(ReplicaCheck{"grad", grads, {}});
  out.checks.push_back(ReplicaCheck{"reduced amax", amaxes, {}});
  return out;
}

/// Seed hazard 2 in miniature: two ranks share one communicator for the amax reduction and a
/// gradient bucket, in opposite orders, so collective #0 pairs rank 0's 4-float MAX with rank
/// 1's 4096-float SUM (a mismatch the simulator refuses to complete).
inline Scenario shared_comm_rank_dependent_order() {
  ScenarioBuilder b("shared comm, rank-dependent order");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId dp = b.comm("dp", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId grad = b.buffer(r, "grad", 4096);
    const BufferId global = b.buffer(r, "amax_global", 4, {1.0f, 2.0f, 3.0f, 4.0f});
    const Op amax = ScenarioBuilder::all_reduce(s, dp, {global, 0, 4}, {global, 0, 4}, "amax_reduce");
    const Op bucket =
        ScenarioBuilder::all_reduce(s, dp, {grad, 0, 4096}, {grad, 0, 4096}, "grad_bucket", ReduceOp::sum);
    b.op(r, t, r == r0 ? amax : bucket);
    b.op(r, t, r == r0 ? bucket : amax);
  }
  return b.build();
}

/// Issues every op it can and executes none: a schedule that leaves everything behind gates.
inline std::vector<Step> issue_only(Engine& engine) {
  std::vector<Step> steps;
  while (!engine.enabled().empty() && engine.enabled().front().kind == ActionKind::issue) {
    steps.push_back(engine.apply(engine.enabled().front()));
  }
  return steps;
}

/// A schedule picked by a tiny deterministic generator over the engine's enabled actions.
inline std::vector<Step> schedule_for(const Scenario& scenario, std::uint64_t seed, Engine& engine) {
  (void)scenario;
  std::vector<Step> steps;
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  while (!engine.enabled().empty()) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const auto& enabled = engine.enabled();
    steps.push_back(engine.apply(enabled[state % enabled.size()]));
  }
  engine.finish();
  return steps;
}

}  // namespace amaxcheck::gpu::testing
