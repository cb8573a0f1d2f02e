// The framework-variant table behind `amaxcheck protocols` (see variant_docs.h). The releases are
// the behaviour each design notes and public source describe; the verdicts are the tests' (
// tests/protocols/variants_test.cpp, reduce_point_test.cpp, protocol_verdicts_test.cpp).
#include "protocols/variant_docs.h"

namespace amaxcheck {

std::vector<VariantDoc> variant_docs() {
  return {
      {"comm", "separate", "apex's amax reduction on a communicator of its own over the DP ranks", ""},
      {"comm", "shared", "the amax all-reduce on the DP communicator that carries the gradient buckets",
       "collective_mismatch (and deadlock) when the amax / bucket order differs between ranks (--amax-order rank-dependent)"},
      {"wait", "before-copy", "TransformerEngine's async amax reduction, fixed: handle.wait() before the copy-back", ""},
      {"wait", "after-copy", "the TransformerEngine release whose async path waited after the copy-back (seed hazard 1, as the design notes "
       "describe it; the release is not named there)",
       "data_race between the copy-back and the in-place all-reduce"},
      {"reduce-at", "exit",
       "TransformerEngine's forward reduction at fp8_autocast exit (every release since v0.1, sync and async)", ""},
      {"reduce-at", "next-entry", "the forward buffer reduced when the next fp8_autocast is entered", ""},
      {"reduce-at", "first-module",
       "the forward reduction in the next autocast's first module's prepare step: no TransformerEngine release is known "
       "to have done this (the forward buffer is reduced at fp8_autocast exit since v0.1); kept as a design to compare. "
       "With --reduce-at-bwd auto it also ties te-sync's backward reduction to the forward's first module",
       "replica_divergence when an --eval module runs ahead of the first registering one (it copies back an unreduced "
       "buffer); with the backward reduction tied to the first module, --reduce-at-bwd first-module's hazards"},
      {"reduce-at-bwd", "auto",
       "the release the protocol models: first-module for te-async (the async path exists in TransformerEngine v0.8-v1.5 "
       "only) and for te-sync with --reduce-at first-module; last-backward for te-sync otherwise (v1.6+)",
       "te-async: first-module's (replica_divergence / value_mismatch with a --frozen first module); te-sync: "
       "last-backward's (clean), or first-module's with --reduce-at first-module"},
      {"reduce-at-bwd", "first-module",
       "TransformerEngine v0.8-v1.5: _prepare_backward (module/base.py, read at v0.10 and v1.5) launches the backward "
       "amax reduction after the backward of fp8_meta[\"first_module\"], the first module to run forward under the "
       "autocast, set in prepare_forward under self.fp8 and self.training whether or not it requires grad",
       "replica_divergence / value_mismatch when the forward's first module is --frozen (its backward never runs, so the "
       "backward amaxes are consumed unreduced); an --eval-backward module ahead of it registers its backward amaxes "
       "after the reduction went out (replica_divergence under te-sync, data_race under te-async)"},
      {"reduce-at-bwd", "last-backward",
       "TransformerEngine v1.6+ (synchronous only): is_first_fp8_module is gated on requires_grad, so the backward "
       "reduction goes out after the last module to run backward",
       ""},
      {"registration", "dynamic",
       "TransformerEngine's per-autocast global buffers (keyed by autocast id), filled by the modules that run in it",
       "collective_mismatch / unjoined_collective when a module runs on part of its amax group (--skip)"},
      {"registration", "static",
       "TransformerEngine v1.6+'s FP8GlobalStateManager buffer: prepare_forward calls add_fp8_tensors_to_global_buffer "
       "whenever fp8 is on (training or not), which appends a module's forward and backward amax slots only at its first "
       "forward on the rank (\"Every module must call this function exactly once since the amax tensors are static\"), "
       "in first-run order; every later reduction covers all of them (a module that did not run leaves 0)",
       "collective_mismatch (and a hang) while a module has run on part of its amax group only (the buffers differ in "
       "size); replica_divergence once ranks that first ran the modules in different orders reduce one module's slot "
       "with another's (the reference claims no value for the mixed slots)"},
      {"unrun", "update",
       "static slots updated all together after the reduction (TransformerEngine v1.6+'s reduce_and_update_fp8_tensors: "
       "a multi-tensor amax_and_scale_update over every module in the buffer; a module that has not run yet has no slot "
       "and is not updated)",
       ""},
      {"unrun", "keep",
       "static slots, but only the modules that ran copy back and update (the alternative; not known to have shipped)",
       "replica_divergence when a module runs on part of its amax group: the ranks that skipped it lag"},
      {"slots", "keyed",
       "TransformerEngine's FP8GlobalStateManager.add_fp8_tensors_to_global_buffer (\"Every module must call this function "
       "exactly once since the amax tensors are static\"; its index kept in fp8_meta[\"buffer_index_and_autocast_key\"]), "
       "so a second call's amax lands in the same amax_history[0] view (read in NVIDIA/TransformerEngine's fp8.py; which "
       "release introduced it is not verified)",
       ""},
      {"slots", "positional",
       "early TransformerEngine: add_amax_to_global_buffer appends every call's amax_history[0] to the autocast's buffer and "
       "stores the position only \"if buffer_position_key not in fp8_meta\"; copy_amax_from_global_buffer reads that "
       "position (read in a 2022 transformer_engine/pytorch/fp8.py; which 0.x tag carries it is not verified)",
       "value_mismatch once an autocast calls a module twice (--repeat): the modules after it read their neighbours' "
       "slots, and the repeated one loses its second call's amax"},
      {"recompute-amax", "skip",
       "TransformerEngine's own checkpoint (distributed.checkpoint): in the recompute phase prepare_forward only swaps in the "
       "FP8 metadata stashed at forward time (get_old_fp8_meta_tensors_for_recompute) and skips "
       "add_fp8_tensors_to_global_buffer (read in module/base.py at NVIDIA/TransformerEngine commit 0004dbd0; the release "
       "tag is not verified)",
       ""},
      {"recompute-amax", "register",
       "a generic checkpoint (torch.utils.checkpoint) of a function that enters fp8_autocast itself, so the recompute is an "
       "FP8 forward of its own: each module's prepare step copies back and updates, and it registers and reduces again "
       "(what TE's recompute phase exists to avoid; no release named; not verified against a tagged release)",
       "value_mismatch: the forward history rolls twice per autocast (every rank alike, so no divergence)"},
      {"sp-amax", "reduce",
       "sequence parallelism with the FP8 all-gather, the gathered tensor cast with a scale from an amax reduced over a "
       "group holding the TP peers: TransformerEngine after NVIDIA/TransformerEngine#74 / #79 (Feb. 2023; the TP reduction "
       "forced with sequence_parallel, fp8_group must contain the TP group), and TE 2.x current scaling's "
       "_customize_quantizers_float8_current_scaling (with_amax_reduction over tp_group for a sequence-parallel column "
       "input and row grad output; read in module/linear.py, release not verified)",
       ""},
      {"sp-amax", "local",
       "delayed scaling: TransformerEngine before NVIDIA/TransformerEngine#74, where the recipe's reduce_amax=False skipped "
       "every amax reduction although sequence parallelism gathers the cast shards in FP8 (the PR's description; release "
       "not verified); current scaling: a quantizer of the gathered tensor without its TP-group amax all-reduce (the "
       "quantizer's default, with_amax_reduction=False; not known to have shipped)",
       "replica_divergence of the gathered tensor (sp_gathered) and of the scales across the TP peers, value_mismatch "
       "against the reference's shards"},
      {"fsdp-amax-group", "shard",
       "torchao float8 with FSDP2 after pytorch/ao#933 (\"all-reduce amax on dp mesh instead of global pg\", merged "
       "2024-09-24): fsdp_pre_all_gather passes the FSDP mesh to hp_tensor_to_float8_dynamic, and "
       "precompute_float8_dynamic_scale_for_fsdp reduces through the weights' DTensor mesh (read in torchao/float8/"
       "fsdp_utils.py and float8_utils.py; the first release carrying it is not verified)",
       ""},
      {"fsdp-amax-group", "world",
       "torchao float8 before pytorch/ao#933: tensor_to_amax(reduce_amax=True) without a device mesh all-reduced over "
       "the default group of every rank (the PR: FSDP2 + pipeline parallel \"causes NCCL hanging\"); with --fsdp "
       "precompute not known to have shipped",
       "deadlock with pipeline stages and --fsdp inline (a later stage waits for the activation the reduction holds "
       "back); collective_mismatch with unequal stage module counts, value_mismatch otherwise (stages' and TP peers' "
       "weights mixed)"},
      {"empty-quantize", "join", "a current-scaling quantizer that joins the amax all-reduce with amax 0 for an empty input", ""},
      {"empty-quantize", "return-early", "a current-scaling quantizer that returns before the all-reduce for an empty input",
       "unjoined_collective / deadlock: its TP peers wait in the all-reduce"},
  };
}

}  // namespace amaxcheck
