#pragma once
/// The sequential reference model: what each protocol *means*, computed in plain code.
///
/// It ignores threads, streams and communicators. Per tensor and autocast, the reduced amax is
/// the max of the local amaxes over the ranks that share the tensor (sharing.h: from the layout,
/// not from the configured amax group) and registered it; then amax_and_scale_update
/// (engine/fp8_math.h, the arithmetic the engine's scale_update op runs too) runs. A design
/// whose group leaves out a rank that shares the tensor, or takes in one that does not,
/// therefore ends with values that differ from these.
/// The program generator (build_protocol) is the mechanism; this is the intent. The engine runs
/// the mechanism, and the value detector compares its final buffers with these numbers, so a
/// protocol whose mechanism does not implement its intent (a race, a positional mix-up of two
/// modules' amaxes) shows up as a value mismatch.
///
/// - Delayed scaling (te-sync, te-async): every registration of a module (it runs and trains
///   in that autocast; in backward, it is not --frozen either) is consumed once, in order, with
///   the protocol's history window, algo and margin; E4M3 forward, E5M2 backward. Where the
///   reduction is launched (--reduce-at) is mechanism, not intent: every variant is held to the
///   same reduced values. With static registration (--registration static) every module has a
///   slot on every rank, so buffers never differ in length; with --unrun update a module that
///   did not register is updated in that autocast too, from the max over the peers that did.
/// - Current scaling: every quantization (forward, backward, and forward again when
///   recomputing) reduces its own amax and recomputes the scale (history of length 1).
///
/// - Sequence parallelism (--sp-gather fp8): tensor 0's every cast uses the scale the protocol's
///   state holds at that point (delayed scaling: after the registrations of earlier autocasts are
///   consumed; current scaling: from this quantization's reduced amax). The last one is recorded
///   (last_cast); the gathered tensor every TP peer must hold is their shards in TP order and the
///   common scale_inv. Where the scale comes from (--sp-amax) is the design under test, not intent.
///
/// - FSDP-sharded weights (--fsdp): per iteration, a module's weight amax is the max over its
///   shards on the FSDP group (DP x CP within a TP index and a stage: the ranks that gather it),
///   and its scale fp8_max / amax (E4M3, no margin); the gathered weight is the group's shards
///   cast with that scale, in member order, and its scale_inv. Which group the design reduces
///   over (--fsdp-amax-group) and when (inline, precompute) is mechanism.
///
/// When the members of a configured reduction group register different numbers of tensors in
/// an autocast, their reductions cannot match (NCCL would hang or corrupt): the group's tensors
/// are marked undefined from then on, and checks carry no expected values for them (the
/// collective detector reports the mismatch; the replicas are still compared).

#include <array>
#include <cstdint>
#include <vector>

#include "protocols/protocol.h"

namespace amaxcheck {

/// Final FP8 metadata of one module in one direction on one rank.
struct ReferenceTensors {
  std::vector<float> amax_history;  ///< history_len x tensors, row-major
  std::vector<float> scale;
  std::vector<float> scale_inv;
  bool defined = true;  ///< false once a reduction of its group was mismatched
};

/// --sp-gather fp8: tensor 0's last cast of one module in one direction on one rank, as FP8
/// values (the sequence shard it contributes to the TP group's all-gather), and the scale_inv
/// that cast went with; `values` is empty when it never cast in that direction.
struct ReferenceCast {
  std::vector<float> values;
  float scale_inv = 1.0f;
};

/// --fsdp: one module's sharded weight on one rank at the end of the run.
struct ReferenceWeight {
  float scale = 1.0f;
  float scale_inv = 1.0f;
  std::vector<float> shard_fp8;  ///< the last iteration's shard cast with `scale`
};

class ReferenceResult {
 public:
  /// `casts` (--sp-gather fp8) and `weights` (--fsdp) size the tables only those knobs use.
  ReferenceResult(std::uint32_t ranks, std::uint32_t modules, bool casts = false, bool weights = false);
  ReferenceTensors& at(RankId rank, Direction dir, std::uint32_t module);
  const ReferenceTensors& at(RankId rank, Direction dir, std::uint32_t module) const;
  ReferenceCast& cast(RankId rank, Direction dir, std::uint32_t module) { return casts_.at(index(rank, dir, module)); }
  const ReferenceCast& cast(RankId rank, Direction dir, std::uint32_t module) const { return casts_.at(index(rank, dir, module)); }
  ReferenceWeight& weight(RankId rank, std::uint32_t module) { return weights_.at(std::size_t{rank} * modules_ + module); }
  const ReferenceWeight& weight(RankId rank, std::uint32_t module) const {
    return weights_.at(std::size_t{rank} * modules_ + module);
  }

 private:
  std::size_t index(RankId rank, Direction dir, std::uint32_t module) const {
    return (static_cast<std::size_t>(rank) * 2 + (dir == Direction::forward ? 0 : 1)) * modules_ + module;
  }
  std::uint32_t modules_;
  std::vector<ReferenceTensors> tensors_;  // [rank][dir][module]
  std::vector<ReferenceCast> casts_;       // [rank][dir][module], --sp-gather fp8 only
  std::vector<ReferenceWeight> weights_;   // [rank][module], --fsdp only
};

/// The history length a protocol keeps: `history` for delayed scaling, 1 for current scaling.
std::uint32_t history_length(const ProtocolKnobs& knobs);

/// Runs the reference model. Knobs must be valid (validate_knobs).
ReferenceResult run_reference_model(const ProtocolKnobs& knobs);

}  // namespace amaxcheck
