#pragma once
/// The specification from the layout: which ranks hold replicas or shards of which FP8 tensor,
/// hence which ranks must end with bit-identical amax history, scale and scale_inv, and over
/// whose local amaxes a reduced amax is the max (shared/DESIGN.md section 7).
///
/// It reads the parallel layout and the protocol's recipe, never the amax group the design
/// under test configures (`--group`). The reference model and the replica checks are built
/// from it, so a wrong group shows up as a replica divergence or a value mismatch naming the
/// tensor and the ranks, instead of redefining what a replica is.
///
/// The rule (traces/SCENARIO.md repeats it per layout):
/// - Delayed scaling (te-sync, te-async): module m's forward and backward tensors in pipeline
///   stage s are shared by every rank of stage s. TP peers hold shards (TP splits the weights
///   and, with sequence parallelism, the activations), CP peers hold shards of the sequence,
///   and DP peers hold replicas. amax history, scale and scale_inv are per-module state that
///   every later cast uses, so all of them must agree: TP x CP x DP within the stage, the group
///   Megatron-LM reduces over.
/// - Current scaling: each quantization's tensor is shared by the TP peers of one DP index, CP
///   index and stage: the sequence-parallel shards of one activation (or grad output), which is
///   gathered and used under one scale. TE's Linear reduces these amaxes over tp_group only
///   (module/linear.py: set_quantizer_amax_reduction_group(input_quantizer, tp_group) for a
///   sequence-parallel column-parallel input, and the grad output's likewise for a row-parallel
///   one); cp_group reduces only FP8 attention's quantizers, which are not modelled. CP peers
///   (and DP replicas) quantize their own part of the sequence (or microbatch) with their own
///   current scale, which lives for one cast, so they need not agree; a reduction over them makes
///   a cast depend on another rank's data, which the reference does not do.
/// - No tensor is shared across pipeline stages: they hold different layers.
///
/// Sequence parallelism is assumed throughout: TP peers quantize different shards, so their
/// local amaxes differ and only a reduction makes them agree.

#include <string>
#include <vector>

#include "protocols/layout.h"

namespace amaxcheck {

/// How the ranks that share a tensor are spread over the parallel dimensions.
struct SharingRule {
  std::vector<Dim> shards;    ///< peers along these hold shards of the tensor
  std::vector<Dim> replicas;  ///< peers along these hold replicas of it
};

SharingRule sharing_rule(ProtocolName protocol);

/// The named group whose partition is the sharing rule's: `tp-dp` (TP x CP x DP) for delayed
/// scaling, `tp` (the TP group alone) for current scaling. `--group auto` resolves to it, since it is the correct group.
GroupKind sharing_group_kind(ProtocolName protocol);

/// The sets of ranks that share tensors: a partition of the ranks, each within one stage, in
/// Layout's group order.
Groups sharing_groups(const Layout& layout, ProtocolName protocol);

/// "TP shards x DP replicas": the rule, naming only the dimensions of size > 1 ("one rank"
/// when none is).
std::string sharing_label(const ProtocolKnobs& knobs);

}  // namespace amaxcheck
