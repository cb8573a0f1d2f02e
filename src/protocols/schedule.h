#pragma once
/// The protocol-independent facts both the program generator and the reference model read:
/// which module runs (and trains) where and when, and the tensor values every cast sees.
///
/// Keeping these in one place means the two sides agree on their *inputs*; the protocol logic
/// itself (what is reduced with whom, when scales update) is written separately in each.

#include <cstdint>
#include <vector>

#include "protocols/protocol.h"

namespace amaxcheck {

/// FP8 modules of pipeline stage `stage` (`stage_modules`, else `modules`).
std::uint32_t stage_module_count(const ProtocolKnobs& knobs, std::uint32_t stage);
/// The most modules any stage has: per-rank module tables are this long.
std::uint32_t max_stage_modules(const ProtocolKnobs& knobs);
/// Whether stages send activations and gradients to each other (pp > 1, a real schedule).
inline bool pipelined(const ProtocolKnobs& k) { return k.pp > 1 && k.pp_schedule != PpSchedule::independent; }

/// One step of a pipeline stage's schedule in one iteration: microbatch `microbatch`'s forward
/// or backward.
struct PipeStep {
  bool forward = true;
  std::uint32_t microbatch = 0;
};
/// The order in which stage `stage` runs the forwards and backwards of one iteration's
/// microbatches (ProtocolKnobs::pp_schedule): 1f1b warms up with min(pp - stage - 1, M)
/// forwards, alternates one forward and one backward, then cools down; gpipe runs every
/// forward, then every backward; backwards run in microbatch order in both.
std::vector<PipeStep> pipeline_order(const ProtocolKnobs& knobs, std::uint32_t stage);

/// Autocasts (forward + backward passes) in the run: iters x microbatches.
inline std::uint32_t autocast_count(const ProtocolKnobs& k) { return k.iters * k.microbatches; }
inline std::uint32_t iter_of(const ProtocolKnobs& k, std::uint32_t autocast) { return autocast / k.microbatches; }

/// False when a --skip rule removes `module` from `rank` in `iter`.
bool module_runs(const ProtocolKnobs& knobs, RankId rank, std::uint32_t iter, std::uint32_t module);
/// True when an --empty rule gives `module` zero-element inputs on `rank` in `iter`.
bool input_empty(const ProtocolKnobs& knobs, RankId rank, std::uint32_t iter, std::uint32_t module);
/// False when an --eval or --eval-backward rule puts `module` in evaluation mode in `iter`.
bool module_trains(const ProtocolKnobs& knobs, std::uint32_t iter, std::uint32_t module);
/// True when an --eval-backward rule gives `module`, in evaluation mode in forward, a backward in `iter`.
bool module_eval_backward(const ProtocolKnobs& knobs, std::uint32_t iter, std::uint32_t module);
/// Runs and trains: registers amaxes (delayed scaling) and has a backward pass.
inline bool module_registers(const ProtocolKnobs& k, RankId rank, std::uint32_t iter, std::uint32_t module) {
  return module_runs(k, rank, iter, module) && module_trains(k, iter, module);
}

/// True when a --frozen rule takes `module`'s backward away in `iter`.
bool module_frozen(const ProtocolKnobs& knobs, std::uint32_t iter, std::uint32_t module);
/// Runs a backward pass (registering its backward amaxes): it registered in forward, or it is in
/// evaluation mode with a backward (--eval-backward); and it is not frozen.
inline bool module_backprops(const ProtocolKnobs& k, RankId rank, std::uint32_t iter, std::uint32_t module) {
  return module_runs(k, rank, iter, module) &&
         (module_trains(k, iter, module) || module_eval_backward(k, iter, module)) && !module_frozen(k, iter, module);
}
/// Registers in `dir`: module_registers for the forward, module_backprops for the backward.
inline bool module_registers_in(const ProtocolKnobs& k, Direction dir, RankId rank, std::uint32_t iter,
                                std::uint32_t module) {
  return dir == Direction::forward ? module_registers(k, rank, iter, module) : module_backprops(k, rank, iter, module);
}

/// Calls of `module` in one forward of `iter` (2 when a --repeat rule applies, else 1); a module
/// that runs and trains registers each call, and autograd runs one backward per call.
std::uint32_t module_calls(const ProtocolKnobs& knobs, std::uint32_t iter, std::uint32_t module);

/// Quantized tensors per module in a direction.
inline std::uint32_t tensor_count(const ProtocolKnobs& k, Direction dir) {
  return dir == Direction::forward ? k.fwd_tensors : k.bwd_tensors;
}
inline Fp8Format format_of(Direction dir) { return dir == Direction::forward ? Fp8Format::e4m3 : Fp8Format::e5m2; }

/// The `elems` values of one quantized tensor: seeded (a splitmix64 stream keyed by seed, rank,
/// autocast, module, direction and tensor, and the call when it is not the first (--repeat);
/// exact binary fractions of both signs with magnitudes in (2^-10, 32]), unless an --input rule
/// sets them by hand (every call alike); none when the input is empty (--empty).
std::vector<float> tensor_values(const ProtocolKnobs& knobs, RankId rank, std::uint32_t autocast,
                                 std::uint32_t module, Direction dir, std::uint32_t tensor, std::uint32_t call = 0);

/// --fsdp: the `elems` values of `module`'s weight shard on `rank` in iteration `iter` (what the
/// previous optimizer step left; the initial weights in iteration 0), seeded like tensor_values
/// in keys of their own. Every rank holds a different shard (the FSDP group spans DP x CP, and TP
/// peers and stages hold different weights).
std::vector<float> weight_shard_values(const ProtocolKnobs& knobs, RankId rank, std::uint32_t iter, std::uint32_t module);

}  // namespace amaxcheck
