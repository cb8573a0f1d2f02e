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

class ReferenceResult {
 public:
  ReferenceResult(std::uint32_t ranks, std::uint32_t modules);
  ReferenceTensors& at(RankId rank, Direction dir, std::uint32_t module);
  const ReferenceTensors& at(RankId rank, Direction dir, std::uint32_t module) const;

 private:
  std::uint32_t modules_;
  std::vector<ReferenceTensors> tensors_;  // [rank][dir][module]
};

/// The history length a protocol keeps: `history` for delayed scaling, 1 for current scaling.
std::uint32_t history_length(const ProtocolKnobs& knobs);

/// Runs the reference model. Knobs must be valid (validate_knobs).
ReferenceResult run_reference_model(const ProtocolKnobs& knobs);

}  // namespace amaxcheck
