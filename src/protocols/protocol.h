#pragma once
/// The protocol library: a few knobs in, per-rank programs out.
///
/// A protocol is a generator. Given ProtocolKnobs it writes, for every rank, the host threads
/// ("main" runs the forward pass and the optimizer; "autograd" runs the backward pass and
/// launches the DDP gradient buckets), the streams ("compute", "grad", one "nccl:<comm>" side
/// stream per amax communicator, as ProcessGroupNCCL has), the buffers (per-module
/// amax_history / scale / scale_inv, per-autocast global amax buffers, gradient buckets) and
/// the ops that connect them. It also writes ReplicaChecks whose expected values come from
/// the sequential reference model (reference_model.h), which is written separately.
///
/// Built-in protocols (see protocol_docs()):
/// - `te-sync`: delayed scaling, synchronous amax all-reduce at autocast exit (current TE);
/// - `te-async`: delayed scaling, asynchronous all-reduce; the first module of the next
///   autocast waits on the handle, `before-copy` or `after-copy` its copy-back (`wait` for
///   the forward, `wait-bwd` for the backward);
/// - `current-scaling`: an inline amax all-reduce and wait for every quantization.
///
/// Knobs are documented by knob_docs(); `amaxcheck protocols` prints them. Every knob can be
/// set from the command line (`--comm shared`) and from a scenario file (`"comm": "shared"`)
/// through the same set_knob(), so both report the same errors.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck {

enum class ProtocolName : std::uint8_t { te_sync, te_async, current_scaling };
enum class CommChoice : std::uint8_t { shared, separate };
enum class WaitPoint : std::uint8_t { before_copy, after_copy };
enum class AmaxOrder : std::uint8_t { same, rank_dependent };
enum class GradOp : std::uint8_t { all_reduce, reduce_scatter };
/// How pipeline stages run their microbatches (pp > 1). `one_f_one_b` is Megatron-LM's default
/// (forward_backward_pipelining_without_interleaving: pp - stage - 1 warm-up forwards, then one
/// forward and one backward in turn, then the cool-down backwards; the steady state's
/// send-forward / recv-backward and send-backward / recv-forward pairs go out as one
/// batch_isend_irecv group); `gpipe` runs every forward, then every backward; `independent`
/// stages do not communicate at all (the model before pipeline schedules existed).
enum class PpSchedule : std::uint8_t { one_f_one_b, gpipe, independent };
/// Current scaling, a quantization whose input is empty on this rank (`--empty`): the quantizer
/// still joins the group's amax all-reduce with an amax of 0 (`join`), or returns before it
/// (`return-early`), leaving its peers waiting in the all-reduce.
enum class EmptyQuantize : std::uint8_t { join, return_early };
/// Delayed scaling: where a forward global buffer is all-reduced (te-sync waits there at once;
/// te-async keeps the handle, which the first registering module of the next autocast waits on,
/// --wait). `exit`: at fp8_autocast exit. `next_entry`: at the entry of the next autocast, before
/// its first module (the last autocast's in the epilogue). `first_module`: in the prepare step of
/// the next autocast's first registering module, before its copy-back (with --reduce-at-bwd auto it
/// also ties te-sync's backward reduction to the forward's first module: BwdReducePoint). No
/// TransformerEngine release is known to have launched the *forward* reduction there: it goes out
/// at fp8_autocast exit since TE v0.1. The backward reduction's place is BwdReducePoint's.
enum class ReducePoint : std::uint8_t { exit, next_entry, first_module };
/// Delayed scaling: where the backward amax reduction goes out. `first_module`: at the end of the
/// backward of the autocast's forward first module, TE's fp8_meta["first_module"] (the first module
/// to run forward under the autocast while training, set in prepare_forward whether or not it
/// requires grad; TE v0.8-v1.5's _prepare_backward in module/base.py), which is never reached when
/// that module has no backward (--frozen): the backward buffer is then consumed unreduced.
/// `last_backward`: after the last module to run backward (TE v1.6+, where is_first_fp8_module is
/// gated on requires_grad; v1.6 has no async path). `automatic`: the release the protocol models,
/// resolved by reduce_at_bwd_of().
enum class BwdReducePoint : std::uint8_t { automatic, first_module, last_backward };
/// Delayed scaling: how modules take slots in an autocast's global amax buffers. `dynamic`: a
/// module registers when it runs and trains in that autocast, at its position among those that
/// did, so a module that does not run on some rank shrinks that rank's buffer (its all-reduce
/// then mismatches its peers'). `static_slots`: TE v1.6+'s add_fp8_tensors_to_global_buffer: a
/// module takes its slots (forward and backward) at its first forward on the rank, training or
/// not, after the modules that ran before it, and keeps them in every later buffer whether it runs
/// or not (leaving 0 there, as TE's zeroed history row 0). A rank that first runs a module later
/// than its peers reduces a shorter buffer until then (collective mismatch), and ranks that first
/// ran the modules in different orders reduce one module's slot with another's (their amaxes mix).
enum class Registration : std::uint8_t { dynamic, static_slots };
/// Static registration: a module that did not register in an autocast (skipped, evaluation mode,
/// frozen in backward) is copied back and updated from the reduced buffer once the reduction is
/// waited on, like every slot of it (`update`: TE's multi-tensor update of the whole buffer), or
/// keeps its history and scale (`keep`), so a rank that skipped it lags its peers that ran it.
enum class UnrunUpdate : std::uint8_t { update, keep };
/// Delayed scaling, dynamic registration: how a module finds its slot in an autocast's global
/// buffer when it copies back. `keyed`: by module, so a module called twice in one autocast
/// (--repeat) has one slot, into which both calls' amaxes go (TE's amax kernels max into
/// amax_history[0], which the buffer entry views). `positional`: every call appends a slot, and
/// the module reads back the position its first registration of the run got (early TE's
/// fp8_meta["global_fp8_buffer_pos_fwd"], set once), so once some autocast registers a different
/// sequence of calls, the modules after the change read their neighbours' slots.
enum class SlotKey : std::uint8_t { keyed, positional };
/// Delayed scaling, --recompute: what the recomputed forward does with amaxes. `skip`: it casts
/// with the forward's saved scales and registers nothing (TE's checkpoint, which swaps in the
/// saved FP8 metadata for the recompute). `register_again`: each module's recompute re-enters
/// fp8_autocast as a forward of its own (a checkpoint around each module): its prepare step copies
/// back and updates from the forward's registration, it registers its amaxes again in a buffer of
/// its own, reduced at that autocast's exit, which the module's next forward copies back, so the
/// forward history rolls twice per autocast.
enum class RecomputeAmax : std::uint8_t { skip, register_again };
/// Sequence parallelism (Megatron-LM / TransformerEngine): each TP peer holds a sequence shard of
/// the input of the column-parallel GEMM (forward tensor 0) and of the grad output of the
/// row-parallel one (backward tensor 0). `off`: the model as before (shards quantized where they
/// are, never gathered). `fp8`: the shard is cast to FP8 and all-gathered over the TP group before
/// the GEMM (TE's gather_along_first_dim of a Float8Tensor); the gathered tensor is the FP8 bytes
/// of every peer's shard with this rank's scale_inv, so it is replicated across the TP peers only
/// when they cast with one scale.
enum class SpGather : std::uint8_t { off, fp8 };
/// --sp-gather fp8: where the scale of the gathered tensor comes from. `reduce`: its amax is
/// reduced over a group that holds the TP peers (delayed scaling: the amax group, which TE forces
/// on with sequence parallelism; current scaling: the quantizer's TP-group amax all-reduce).
/// `local`: each rank's own amax. Delayed scaling: the recipe's reduce_amax=False skips every amax
/// reduction (TE before its sequence-parallel fix); current scaling: the gathered tensor's
/// quantizer has no amax reduction (only its all-reduce is left out).
enum class SpAmax : std::uint8_t { reduce, local };
/// FSDP-style sharded weights with an FP8 all-gather (torchao float8 under FSDP2's fully_shard,
/// current scaling): every module has a weight sharded over the FSDP group (DP x CP within a TP
/// index and a stage), which its pre-forward hook casts to FP8 and all-gathers (fsdp_pre_all_gather)
/// and reads with this rank's scale_inv (fsdp_post_all_gather), so the gathered weight is one
/// tensor only when the shards were cast with one scale. `off`: no sharded weights. `inline`:
/// each pre-all-gather computes the shard's amax and all-reduces it (hp_tensor_to_float8_dynamic
/// with reduce_amax). `precompute`: after the optimizer step (and before the first iteration) one
/// all-reduce of every weight's amax sets the scales the gathers use
/// (precompute_float8_dynamic_scale_for_fsdp).
enum class FsdpMode : std::uint8_t { off, inline_amax, precompute };
/// --fsdp: the group the weight amax is all-reduced over. `shard`: the FSDP mesh's group
/// (torchao after pytorch/ao#933; the precompute's DTensor reduction always). `world`: the default
/// process group, every rank (torchao before #933: tensor_to_amax without a device mesh).
enum class FsdpAmaxGroup : std::uint8_t { shard, world };

/// The protocol names (`amaxcheck check <protocol>`, scenario files' "protocol").
template <>
struct EnumNames<ProtocolName> {
  static constexpr std::array table{
      EnumName<ProtocolName>{ProtocolName::te_sync, "te-sync"},
      EnumName<ProtocolName>{ProtocolName::te_async, "te-async"},
      EnumName<ProtocolName>{ProtocolName::current_scaling, "current-scaling"}};
};

// The knob spellings of the choice knobs (knobs.cpp reads them; `amaxcheck protocols` lists them).
template <>
struct EnumNames<CommChoice> {
  static constexpr std::array table{EnumName<CommChoice>{CommChoice::shared, "shared"},
                                    EnumName<CommChoice>{CommChoice::separate, "separate"}};
};
template <>
struct EnumNames<WaitPoint> {
  static constexpr std::array table{EnumName<WaitPoint>{WaitPoint::before_copy, "before-copy"},
                                    EnumName<WaitPoint>{WaitPoint::after_copy, "after-copy"}};
};
template <>
struct EnumNames<AmaxOrder> {
  static constexpr std::array table{EnumName<AmaxOrder>{AmaxOrder::same, "same"},
                                    EnumName<AmaxOrder>{AmaxOrder::rank_dependent, "rank-dependent"}};
};
template <>
struct EnumNames<PpSchedule> {
  static constexpr std::array table{EnumName<PpSchedule>{PpSchedule::one_f_one_b, "1f1b"},
                                    EnumName<PpSchedule>{PpSchedule::gpipe, "gpipe"},
                                    EnumName<PpSchedule>{PpSchedule::independent, "independent"}};
};
template <>
struct EnumNames<EmptyQuantize> {
  static constexpr std::array table{EnumName<EmptyQuantize>{EmptyQuantize::join, "join"},
                                    EnumName<EmptyQuantize>{EmptyQuantize::return_early, "return-early"}};
};
template <>
struct EnumNames<ReducePoint> {
  static constexpr std::array table{EnumName<ReducePoint>{ReducePoint::exit, "exit"},
                                    EnumName<ReducePoint>{ReducePoint::next_entry, "next-entry"},
                                    EnumName<ReducePoint>{ReducePoint::first_module, "first-module"}};
};
template <>
struct EnumNames<BwdReducePoint> {
  static constexpr std::array table{EnumName<BwdReducePoint>{BwdReducePoint::automatic, "auto"},
                                    EnumName<BwdReducePoint>{BwdReducePoint::first_module, "first-module"},
                                    EnumName<BwdReducePoint>{BwdReducePoint::last_backward, "last-backward"}};
};
template <>
struct EnumNames<Registration> {
  static constexpr std::array table{EnumName<Registration>{Registration::dynamic, "dynamic"},
                                    EnumName<Registration>{Registration::static_slots, "static"}};
};
template <>
struct EnumNames<UnrunUpdate> {
  static constexpr std::array table{EnumName<UnrunUpdate>{UnrunUpdate::update, "update"},
                                    EnumName<UnrunUpdate>{UnrunUpdate::keep, "keep"}};
};
template <>
struct EnumNames<SlotKey> {
  static constexpr std::array table{EnumName<SlotKey>{SlotKey::keyed, "keyed"},
                                    EnumName<SlotKey>{SlotKey::positional, "positional"}};
};
template <>
struct EnumNames<RecomputeAmax> {
  static constexpr std::array table{EnumName<RecomputeAmax>{RecomputeAmax::skip, "skip"},
                                    EnumName<RecomputeAmax>{RecomputeAmax::register_again, "register"}};
};
template <>
struct EnumNames<SpGather> {
  static constexpr std::array table{EnumName<SpGather>{SpGather::off, "off"}, EnumName<SpGather>{SpGather::fp8, "fp8"}};
};
template <>
struct EnumNames<SpAmax> {
  static constexpr std::array table{EnumName<SpAmax>{SpAmax::reduce, "reduce"}, EnumName<SpAmax>{SpAmax::local, "local"}};
};
template <>
struct EnumNames<FsdpMode> {
  static constexpr std::array table{EnumName<FsdpMode>{FsdpMode::off, "off"}, EnumName<FsdpMode>{FsdpMode::inline_amax, "inline"},
                                    EnumName<FsdpMode>{FsdpMode::precompute, "precompute"}};
};
template <>
struct EnumNames<FsdpAmaxGroup> {
  static constexpr std::array table{EnumName<FsdpAmaxGroup>{FsdpAmaxGroup::shard, "shard"},
                                    EnumName<FsdpAmaxGroup>{FsdpAmaxGroup::world, "world"}};
};
template <>
struct EnumNames<GradOp> {
  static constexpr std::array table{EnumName<GradOp>{GradOp::all_reduce, "all-reduce"},
                                    EnumName<GradOp>{GradOp::reduce_scatter, "reduce-scatter"}};
};

/// Generated amax reductions are named "<prefix>_<fwd|bwd|...>"; hand-written scenario files use
/// the same convention (traces/SCENARIO.md), and the cost metrics find amax reductions by it.
inline constexpr std::string_view amax_reduction_name_prefix = "amax_reduce";
enum class Direction : std::uint8_t { forward, backward };
template <>
struct EnumNames<Direction> {
  static constexpr std::array table{
      EnumName<Direction>{Direction::forward, "forward"},
      EnumName<Direction>{Direction::backward, "backward"}};
};
/// The amax reduction group. `dp` = DP x CP (Megatron's gradient group), `tp` = the TP group
/// alone (TE's tp_group, which current scaling's quantizers reduce over), `tp_dp` = TP x CP x DP
/// within a pipeline stage (Megatron's amax reduction group with context parallelism), `world` =
/// every rank. `automatic` is `tp_dp` for delayed scaling and `tp` for current scaling.
enum class GroupKind : std::uint8_t { automatic, dp, tp, tp_dp, world, explicit_lists };
/// Parallel dimensions, for the rank ordering (fastest-varying first).
enum class Dim : std::uint8_t { tp, cp, dp, pp };

/// `--skip RANK:MODULE[:ITER]`: the module does not run on that rank (in that iteration, or in
/// every iteration): no forward, no backward, no amax registration (an MoE expert that
/// received no tokens).
struct SkipRule {
  RankId rank = 0;
  std::uint32_t module = 0;
  std::optional<std::uint32_t> iter;
};

/// `--eval MODULE[:ITER]`: the module runs in evaluation mode on every rank: forward only, it
/// casts with its current scale and registers no amax. `--frozen MODULE[:ITER]` reads the same
/// way: the module trains its forward (casts, registers its forward amaxes) but has no backward
/// pass on any rank (frozen weights and no input gradient needed, as the first layers of a
/// fine-tuned model, or a module whose backward does not run in that iteration).
struct EvalRule {
  std::uint32_t module = 0;
  std::optional<std::uint32_t> iter;
};

/// `--input RANK:ITER:MODULE:fwd|bwd[:TENSOR]=V[,V...]`: hand-set tensor values (every
/// microbatch of that iteration). One value fills the whole tensor; otherwise the list must
/// have `elems` values. Without TENSOR every tensor of the module gets them.
struct InputRule {
  RankId rank = 0;
  std::uint32_t iter = 0;
  std::uint32_t module = 0;
  Direction dir = Direction::forward;
  std::optional<std::uint32_t> tensor;
  std::vector<float> values;
};

struct ProtocolKnobs {
  ProtocolName protocol = ProtocolName::te_sync;
  CommChoice comm = CommChoice::separate;
  /// te-async: where the forward's first module waits on the previous forward reduction.
  /// The TE release the knob models waited after the copy-back in the forward only.
  WaitPoint wait = WaitPoint::before_copy;
  WaitPoint wait_bwd = WaitPoint::before_copy;  ///< te-async: the same for the backward
  AmaxOrder amax_order = AmaxOrder::same;   ///< delayed scaling's backward reduction
  std::uint32_t dp = 2;
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::uint32_t cp = 1;
  std::array<Dim, 4> order = {Dim::tp, Dim::cp, Dim::dp, Dim::pp};  ///< fastest first
  std::uint32_t ranks_per_node = 8;  ///< Rank::device = local rank on its node
  std::uint32_t modules = 2;         ///< FP8 modules per pipeline stage (unless stage_modules)
  /// Modules of each pipeline stage (one count per stage); empty: `modules` in every stage.
  std::vector<std::uint32_t> stage_modules;
  PpSchedule pp_schedule = PpSchedule::one_f_one_b;  ///< pp > 1: the pipeline schedule
  /// Autocasts (forward + backward) per iteration; gradients reduce on the last one. Two by
  /// default, as gradient accumulation is the norm: with one, a shared communicator's gradient
  /// buckets (which DDP waits on before the optimizer) happen to order the amax reduction
  /// before the next copy-back, masking the wait-after-copy race.
  std::uint32_t microbatches = 2;
  std::uint32_t iters = 2;
  std::uint32_t history = 2;  ///< amax history length (delayed scaling)
  HistoryAlgo algo = HistoryAlgo::max;
  int margin = 0;
  KernelConcurrency kernels = KernelConcurrency::concurrent;
  GroupKind group = GroupKind::automatic;
  std::vector<std::vector<RankId>> explicit_groups;  ///< GroupKind::explicit_lists: a partition
  std::uint32_t buckets = 2;  ///< DDP gradient buckets
  GradOp grad_op = GradOp::all_reduce;
  bool grad_overlap = true;  ///< buckets go out as their gradients are ready (else at the end)
  std::vector<SkipRule> skips;
  /// `--empty RANK:MODULE[:ITER]`: the module runs on that rank, but its inputs have zero
  /// elements (a sequence shard or an MoE expert that got no tokens): every local amax is 0.
  std::vector<SkipRule> empties;
  EmptyQuantize empty_quantize = EmptyQuantize::join;  ///< current scaling: see EmptyQuantize
  std::vector<EvalRule> evals;
  std::vector<EvalRule> frozen;  ///< `--frozen MODULE[:ITER]`: forward, no backward (see EvalRule)
  /// `--eval-backward MODULE[:ITER]`: evaluation mode in forward (casts with its current scale,
  /// registers nothing), but the backward runs and registers its amaxes (the frozen base layers of
  /// an adapter / LoRA fine-tune, through which the gradient flows to the adapters).
  std::vector<EvalRule> eval_backward;
  ReducePoint reduce_at = ReducePoint::exit;  ///< delayed scaling: see ReducePoint
  BwdReducePoint reduce_at_bwd = BwdReducePoint::automatic;  ///< delayed scaling: see BwdReducePoint
  Registration registration = Registration::dynamic;  ///< delayed scaling: see Registration
  UnrunUpdate unrun = UnrunUpdate::update;             ///< static registration: see UnrunUpdate
  SlotKey slots = SlotKey::keyed;                      ///< dynamic registration: see SlotKey
  /// `--repeat MODULE[:ITER]`: the module is called twice in a row in every forward of that
  /// iteration on every rank (a layer applied twice, shared weights), so autograd runs its
  /// backward twice too; each call quantizes its own inputs.
  std::vector<EvalRule> repeats;
  bool recompute = false;  ///< activation recomputation (outside the autocast) in backward
  RecomputeAmax recompute_amax = RecomputeAmax::skip;  ///< delayed scaling, --recompute: see RecomputeAmax
  SpGather sp_gather = SpGather::off;  ///< sequence parallelism's FP8 all-gather: see SpGather
  SpAmax sp_amax = SpAmax::reduce;     ///< --sp-gather fp8: see SpAmax
  FsdpMode fsdp = FsdpMode::off;       ///< current scaling: FSDP-sharded FP8 weights, see FsdpMode
  FsdpAmaxGroup fsdp_amax_group = FsdpAmaxGroup::shard;  ///< --fsdp: see FsdpAmaxGroup
  std::uint64_t seed = 1;  ///< seeds the tensor values, hence the local amaxes
  std::vector<InputRule> inputs;
  std::uint32_t elems = 4;        ///< elements per quantized tensor
  std::uint32_t fwd_tensors = 2;  ///< quantized tensors per module in forward (input, weight)
  std::uint32_t bwd_tensors = 1;  ///< ... and in backward (grad output)
  std::uint32_t grad_elems = 2;   ///< gradient elements per DP member per bucket
  double gemm_us = 100;           ///< cost of one GEMM kernel, for timed runs
  /// Timed runs: the bytes each gradient bucket stands for (DDP's bucket_cap_mb, 25 MiB), as
  /// the simulator carries only `grad-elems` values per member.
  std::uint64_t bucket_bytes = 25ull << 20;
  /// Timed runs: a model shape. With `hidden` > 0 each FP8 module stands for one transformer
  /// layer (12 hidden^2 parameters): its GEMMs cost 2 * tokens * 12 hidden^2 FLOPs each (instead
  /// of `gemm-us`) and the buckets share its fp32 gradients evenly (instead of `bucket-bytes`).
  std::uint32_t hidden = 0;
  std::uint32_t tokens = 4096;  ///< tokens per microbatch (with `hidden`)
};

/// --reduce-at-bwd with `auto` resolved: first-module for te-async (the async path is TE
/// v0.8-v1.5's, whose backward reduction is tied to fp8_meta["first_module"]) and for te-sync with
/// --reduce-at first-module (the two were one knob before); last-backward otherwise (TE v1.6+).
inline BwdReducePoint reduce_at_bwd_of(const ProtocolKnobs& knobs) {
  if (knobs.reduce_at_bwd != BwdReducePoint::automatic) return knobs.reduce_at_bwd;
  const bool tied = knobs.protocol == ProtocolName::te_async || knobs.reduce_at == ReducePoint::first_module;
  return tied ? BwdReducePoint::first_module : BwdReducePoint::last_backward;
}

/// One knob as documented by `amaxcheck protocols` and accepted by set_knob.
struct KnobDoc {
  std::string name;           ///< command-line name without dashes, e.g. "amax-order"
  std::string default_value;  ///< as printed, e.g. "same"
  std::string values;         ///< what it accepts, e.g. "same|rank-dependent"
  std::string help;
  bool flag = false;        ///< a switch: `--recompute` (in files: true / false)
  bool repeatable = false;  ///< may be given several times (in files: an array of strings)
  std::vector<std::string> choices = {};  ///< a choice knob's values, the spellings `values` joins; else empty
};

struct ProtocolDoc {
  std::string name;
  std::string summary;
};

const char* to_string(ProtocolName protocol);
const char* to_string(Direction dir);
std::vector<ProtocolDoc> protocol_docs();
/// "te-sync" -> ProtocolName; nullopt for anything else.
std::optional<ProtocolName> parse_protocol(const std::string& name);

std::vector<KnobDoc> knob_docs();
/// Sets one knob from its textual value. Returns nullopt on success, otherwise what was
/// expected (e.g. "expected shared|separate, got \"both\""). Unknown names are errors too.
std::optional<std::string> try_set_knob(ProtocolKnobs& knobs, const std::string& name,
                                        const std::string& value);
/// try_set_knob that throws InputError("--name: expected ...").
void set_knob(ProtocolKnobs& knobs, const std::string& name, const std::string& value);
/// The largest world (dp*tp*pp*cp), and so the largest size of any one dimension. What a world
/// this large costs is the memory estimate's business (scheduler/memory_estimate.h, checked
/// against --max-memory before anything is built): a fixed cap only stops sizes that no
/// machine could hold.
constexpr std::uint32_t kMaxWorld = 65536;
/// Checks the knobs together (sizes, ranges, rank lists, shared-comm feasibility); throws
/// InputError naming the knob and what was expected.
void validate_knobs(const ProtocolKnobs& knobs);
/// The knobs that differ from their defaults, as command-line arguments.
std::vector<std::string> knob_args(const ProtocolKnobs& knobs);
/// "amaxcheck check te-async --comm shared ...": the command line that rebuilds the scenario.
std::string command_line(const ProtocolKnobs& knobs);

/// Validates the knobs and generates the scenario, checks included.
Scenario build_protocol(const ProtocolKnobs& knobs);

}  // namespace amaxcheck
