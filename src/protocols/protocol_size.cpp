#include "protocols/protocol_size.h"

#include "protocols/reference_model.h"
#include "protocols/schedule.h"

namespace amaxcheck {

std::uint64_t estimated_ops(const ProtocolKnobs& k) {
  const std::uint64_t world = std::uint64_t{k.dp} * k.tp * k.pp * k.cp;
  const std::uint64_t per_module = 16ull * (k.fwd_tensors + k.bwd_tensors) * (k.recompute ? 2 : 1) + 8;
  return world * k.iters * k.microbatches * (max_stage_modules(k) * per_module + 8ull * k.buckets + 16);
}

ScenarioSize protocol_size(const ProtocolKnobs& k) {
  const std::uint64_t world = std::uint64_t{k.dp} * k.tp * k.pp * k.cp;
  const std::uint64_t autocasts = autocast_count(k);
  const std::uint64_t tensors = std::uint64_t{tensor_count(k, Direction::forward)} + tensor_count(k, Direction::backward);
  const std::uint64_t history = history_length(k);
  const std::uint64_t grad_members = std::uint64_t{k.dp} * k.cp;  // at most: the DP x CP group
  ScenarioSize size;
  size.ranks = world;
  size.actors = world * 5;  // main and autograd threads; compute, grad and amax streams
  size.ops = estimated_ops(k);
  size.ranges = 2 * size.ops;
  size.collectives = world * autocasts * (2 + k.buckets);
  // Per module and direction: input and fp8 (tensors x elems), the history, scale and scale_inv;
  // per module the activation and dgrad; the gradient buckets and params; the global amax buffers.
  const std::uint64_t modules = max_stage_modules(k);  // the largest stage, on every rank: an upper bound
  const std::uint64_t per_rank = modules * (tensors * (2ull * k.elems + history + 2) + 2ull * k.elems) +
                                 2ull * k.buckets * grad_members * k.grad_elems + autocasts * modules * tensors;
  size.buffer_elements = world * per_rank;
  // A fill per quantized tensor and autocast (twice for recomputed forward inputs), and one per
  // gradient bucket and iteration.
  const std::uint64_t fills = autocasts * modules * tensors * (k.recompute ? 2 : 1);
  size.op_values = world * (fills * k.elems + std::uint64_t{k.iters} * k.buckets * grad_members * k.grad_elems);
  // Each filled tensor is written again by its cast, its copies and its gradients.
  size.written_elements = 3 * size.op_values;
  return size;
}

}  // namespace amaxcheck
