#include "protocols/protocol_size.h"

#include <algorithm>

#include "protocols/reference_model.h"
#include "protocols/schedule.h"

namespace amaxcheck {
namespace {

/// Module calls per autocast, at most: every module once, a --repeat'ed one twice.
std::uint64_t module_call_bound(const ProtocolKnobs& k) {
  const std::uint64_t modules = max_stage_modules(k);
  return modules + std::min<std::uint64_t>(k.repeats.size(), modules);
}

/// --sp-gather fp8: all-gathers per module call and autocast (forward, backward, the recompute).
std::uint64_t sp_gathers(const ProtocolKnobs& k) {
  return k.sp_gather == SpGather::fp8 ? 2ull + (k.recompute ? 1 : 0) : 0;
}

/// --fsdp: per module call and autocast, the unshards (the forward's, the recompute's) of at most
/// 12 ops each; per iteration 3 ops per module and the precompute's all-reduce.
std::uint64_t fsdp_unshards(const ProtocolKnobs& k) { return k.fsdp != FsdpMode::off ? 1ull + (k.recompute ? 1 : 0) : 0; }

}  // namespace

std::uint64_t estimated_ops(const ProtocolKnobs& k) {
  const std::uint64_t world = std::uint64_t{k.dp} * k.tp * k.pp * k.cp;
  const std::uint64_t per_module =
      16ull * (k.fwd_tensors + k.bwd_tensors) * (k.recompute ? 2 : 1) + 8 + 6 * sp_gathers(k) + 12 * fsdp_unshards(k);
  const std::uint64_t per_iter = k.fsdp != FsdpMode::off ? 3ull * max_stage_modules(k) + 6 : 0;
  return world * k.iters * (k.microbatches * (module_call_bound(k) * per_module + 8ull * k.buckets + 16) + per_iter);
}

ScenarioSize protocol_size(const ProtocolKnobs& k) {
  const std::uint64_t world = std::uint64_t{k.dp} * k.tp * k.pp * k.cp;
  const std::uint64_t autocasts = autocast_count(k);
  const std::uint64_t tensors = std::uint64_t{tensor_count(k, Direction::forward)} + tensor_count(k, Direction::backward);
  const std::uint64_t history = history_length(k);
  const std::uint64_t grad_members = std::uint64_t{k.dp} * k.cp;  // at most: the DP x CP group
  ScenarioSize size;
  size.ranks = world;
  // main and autograd threads; compute, grad and amax streams; the TP group's side stream
  // and --fsdp's (the FSDP group's and the world's)
  size.actors = world * (5 + (k.sp_gather == SpGather::fp8 ? 1 : 0) + (k.fsdp != FsdpMode::off ? 2 : 0));
  size.ops = estimated_ops(k);
  size.ranges = 2 * size.ops;
  // --recompute-amax register: one more forward reduction per module call and autocast.
  const std::uint64_t recompute_reductions =
      k.recompute && k.recompute_amax == RecomputeAmax::register_again ? module_call_bound(k) : 0;
  size.collectives = world * autocasts * (2 + k.buckets + recompute_reductions + module_call_bound(k) * (sp_gathers(k) + 2 * fsdp_unshards(k))) +
                     (k.fsdp != FsdpMode::off ? world * k.iters : 0);
  // Per module and direction: input and fp8 (tensors x elems), the history, scale and scale_inv;
  // per module the activation and dgrad; the gradient buckets and params; the global amax buffers.
  const std::uint64_t modules = max_stage_modules(k);  // the largest stage, on every rank: an upper bound
  const std::uint64_t calls = module_call_bound(k);  // slots per buffer, at most; and the amax pairs
  const std::uint64_t per_rank = modules * (tensors * (2ull * k.elems + history + 2) + 2ull * k.elems) +
                                 2ull * k.buckets * grad_members * k.grad_elems + autocasts * calls * tensors +
                                 4ull * (calls - modules) + autocasts * recompute_reductions * k.fwd_tensors +
                                 (sp_gathers(k) > 0 ? modules * 2 * (std::uint64_t{k.tp} * k.elems + 1) : 0) +
                                 (k.fsdp != FsdpMode::off ? modules * (2ull * k.elems + 4 + grad_members * k.elems + 1) : 0);
  size.buffer_elements = world * per_rank;
  // A fill per quantized tensor and autocast (twice for recomputed forward inputs), and one per
  // gradient bucket and iteration.
  const std::uint64_t fills = autocasts * calls * tensors * (k.recompute ? 2 : 1);
  // --fsdp: one fill per module weight shard and iteration.
  const std::uint64_t weight_fills = k.fsdp != FsdpMode::off ? std::uint64_t{k.iters} * modules * k.elems : 0;
  size.op_values =
      world * (fills * k.elems + std::uint64_t{k.iters} * k.buckets * grad_members * k.grad_elems + weight_fills);
  // Each filled tensor is written again by its cast, its copies and its gradients.
  size.written_elements = 3 * size.op_values;
  return size;
}

}  // namespace amaxcheck
