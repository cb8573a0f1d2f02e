#pragma once
/// The program generator behind build_protocol (internal to src/protocols).
///
/// generator.cpp writes what every protocol shares, modelled on PyTorch + DDP:
/// - rank layout, communicators (one per gradient group; one per amax group unless shared);
/// - per rank: threads "main" and "autograd", streams "compute" and "grad", host flags
///   "backward_start" / "backward_done" (loss.backward() handing work to the autograd thread
///   and returning when it is done), per-module FP8 buffers;
/// - the training loop: forward on main, backward on autograd with DDP gradient buckets on
///   the "grad" stream (record on compute, grad waits, bucket collective, and at the end the
///   compute stream waits on the buckets' completion), the optimizer step on main, and a final
///   epilogue that consumes the last reductions and synchronizes the device.
/// delayed_scaling.cpp and current_scaling.cpp fill in the FP8 parts of each module.

#include <optional>
#include <string>
#include <vector>

#include "protocols/layout.h"
#include "protocols/program_writer.h"
#include "protocols/protocol.h"
#include "protocols/schedule.h"

namespace amaxcheck {

class ProgramGenerator {
 public:
  explicit ProgramGenerator(const ProtocolKnobs& knobs);
  /// Writes ranks and communicators (no checks, no source).
  Scenario build();

 private:
  struct DirBuffers {
    BufferId input = 0;    ///< tensors x elems: what the casts quantize
    BufferId fp8 = 0;      ///< tensors x elems: the cast outputs
    BufferId history = 0;  ///< history_len x tensors
    BufferId scale = 0;
    BufferId scale_inv = 0;
  };
  /// --fsdp: a module's sharded weight and what its FP8 all-gather needs.
  struct WeightBuffers {
    BufferId shard = 0;     ///< elems: this rank's shard
    BufferId fp8 = 0;       ///< elems: the shard cast to FP8
    BufferId amax = 0;      ///< 1: --fsdp inline, the shard's (then reduced) amax
    BufferId scale = 0, scale_inv = 0;
    BufferId gathered = 0;  ///< every FSDP peer's FP8 shard, then this rank's scale_inv
  };
  struct ModuleBuffers {
    DirBuffers dir[2];  // [forward, backward]
    /// --repeat with keyed slots: [slot value, this call's amax], maxed back into the one slot.
    std::optional<BufferId> amax_pair[2];
    /// --sp-gather fp8, per direction: tensor 0's FP8 shards of every TP peer, then this rank's
    /// scale_inv (the gathered Float8Tensor the GEMM reads).
    std::optional<BufferId> sp_gathered[2];
    std::optional<WeightBuffers> weight;  ///< --fsdp
    BufferId activation = 0;
    BufferId dgrad = 0;
  };
  /// A registration not yet copied back: its autocast's global buffer and slot.
  struct Pending {
    BufferId global = 0;
    std::uint32_t slot = 0;
    std::uint32_t autocast = 0;
  };
  struct RankState {
    RankId id = 0;
    RankWriter writer;
    ThreadId main = 0, autograd = 0;
    StreamId compute = 0, grad = 0, nccl = 0;
    std::uint32_t backward_start = 0, backward_done = 0;
    std::optional<CommId> grad_comm, amax_comm;
    std::optional<CommId> pp_comm;        ///< the pipeline group (pipelined runs)
    std::optional<CommId> tp_comm;        ///< the TP group (--sp-gather fp8)
    StreamId tp_stream = 0;               ///< its ProcessGroupNCCL side stream
    std::optional<CommId> fsdp_comm, fsdp_amax_comm;  ///< --fsdp: the FSDP group; the weight amax group
    StreamId fsdp_stream = 0, fsdp_amax_stream = 0;   ///< their side streams (one when they are one comm)
    BufferId fsdp_amax = 0;                           ///< --fsdp precompute: every module's weight amax
    std::uint32_t fsdp_members = 0;
    std::uint32_t stage = 0;
    std::uint32_t module_count = 0;       ///< modules of this rank's stage
    BufferId act_in = 0, grad_in = 0;     ///< pipelined: what the previous / next stage sends
    std::uint32_t next_group = 1;         ///< the next ncclGroup id (batch_isend_irecv) on main
    std::uint32_t grad_members = 1;
    std::uint32_t grad_index = 0;  ///< position in its gradient group
    std::vector<ModuleBuffers> modules;
    std::vector<BufferId> buckets, shards;
    BufferId params = 0;
    std::vector<std::optional<Pending>> pending[2];  ///< [dir][module]
    bool handle_outstanding[2] = {false, false};     ///< te-async handles not yet waited on
    /// --reduce-at next-entry / first-module: the forward buffer whose reduction has not been
    /// launched yet, and its autocast.
    std::optional<Pending> unreduced_fwd;
    /// --registration static --unrun update: the slots of modules that did not register, to be
    /// copied back and updated once their reduction is waited on, per direction.
    std::vector<std::pair<std::uint32_t, Pending>> unrun[2];
    /// --registration static: the modules in the order of their first forward on this rank
    /// (TE's add_fp8_tensors_to_global_buffer appends a module's slots once, at its first
    /// forward, training or not): module first_run[i] owns slot i of every buffer from then on,
    /// and a module that has not run yet has none.
    std::vector<std::uint32_t> first_run;
    /// --slots positional: the slot each module's first registration of the run got, per
    /// direction: where it copies back from ever after.
    std::vector<std::optional<std::uint32_t>> fixed_slot[2];
    bool backward_reduced = false;  ///< te-sync: this backward's reduction went out and was waited on
    explicit RankState(Rank& rank) : writer(rank) {}
  };

  // generator.cpp: the shared skeleton.
  void make_comms(Scenario& scenario);
  /// One communicator per group, named `base` (`base<g>` when there are several); `comm_of[r]` is rank r's.
  void add_group_comms(Scenario& scenario, const Groups& groups, const char* base, std::vector<std::optional<CommId>>& comm_of);
  void setup_rank(RankState& rs);
  void write_forward(RankState& rs, std::uint32_t autocast);
  /// The forward pass of one autocast: its modules and the autocast exit.
  void write_forward_pass(RankState& rs, std::uint32_t autocast);
  /// loss.backward() on main (the autograd thread runs it), then the optimizer after the
  /// iteration's last microbatch.
  void write_backward_call(RankState& rs, std::uint32_t autocast);
  void write_backward(RankState& rs, std::uint32_t autocast);
  void write_optimizer(RankState& rs, std::uint32_t iter);
  void write_buckets(RankState& rs, std::uint32_t autocast, std::uint32_t position);
  /// Fills a module's input tensors for `dir` (seeded values) on `thread`.
  void write_inputs(RankState& rs, ThreadId thread, std::uint32_t autocast, std::uint32_t module, Direction dir,
                    const std::string& origin, std::uint32_t tensor, std::uint32_t call = 0);
  /// A collective as ProcessGroupNCCL issues it on its side stream `side`: `<events>.ready`
  /// recorded on compute, the side stream waits on it, the collective (named `name`), `<events>.done`
  /// recorded; `sync` adds work.wait() on compute.
  void write_side_collective(RankState& rs, ThreadId thread, StreamId side, Op collective, const std::string& events,
                             const std::string& name, const std::string& origin, bool sync);
  /// The amax all-reduce (MAX) of `range` over the rank's amax communicator, named
  /// "<amax_reduction_name_prefix>_<tag>", its events "amax_<tag>.ready" / ".done".
  void write_amax_all_reduce(RankState& rs, ThreadId thread, Range range, const std::string& tag,
                             const std::string& origin, bool sync);
  /// --sp-gather fp8: tensor 0 of `module` in `dir` was just cast; all-gather its FP8 shard over
  /// the TP group (synchronous, as the GEMM consumes it) and attach this rank's scale_inv.
  void write_sp_gather(RankState& rs, ThreadId thread, std::uint32_t module, Direction dir, const std::string& origin);
  /// --sp-gather fp8 --sp-amax local: tensor 0's amax is not reduced (current scaling).
  bool sp_local_amax(std::uint32_t tensor) const {
    return knobs_.sp_gather == SpGather::fp8 && knobs_.sp_amax == SpAmax::local && tensor == 0;
  }
  std::string origin(std::uint32_t autocast, std::optional<std::uint32_t> module, const std::string& what) const;
  /// The backward position (0 = first module to run backward) after which bucket b goes out,
  /// in a stage of `modules` modules.
  std::uint32_t bucket_position(std::uint32_t bucket, std::uint32_t modules) const;

  // pipeline.cpp: pipeline schedules (pp > 1).
  /// One iteration of the rank's stage in its schedule's order, with the stage-to-stage sends
  /// and receives.
  void write_pipeline_iteration(RankState& rs, std::uint32_t iter);
  /// send (to the next / previous stage) and recv ops on main's compute stream; both together
  /// form one batch_isend_irecv group.
  void write_p2p(RankState& rs, std::optional<Op> send, std::optional<Op> recv, std::uint32_t autocast,
                 const std::string& what);

  // fsdp.cpp: FSDP-sharded FP8 weights (--fsdp).
  void fsdp_make_comms(Scenario& scenario);
  void fsdp_setup_rank(RankState& rs);
  /// The start of iteration `iter` on main: the weight shards the optimizer step left, and with
  /// --fsdp precompute their amaxes' one all-reduce and the scales.
  void fsdp_iteration_start(RankState& rs, std::uint32_t iter);
  /// `module`'s FSDP pre-forward hook: (inline: amax, all-reduce, scale) cast, all-gather, scale_inv.
  void fsdp_unshard(RankState& rs, ThreadId thread, std::uint32_t autocast, std::uint32_t module, const std::string& what);

  // delayed_scaling.cpp
  /// One call of a module's forward (`call` > 0: --repeat; it writes its amaxes to `slot` and
  /// takes no copy-back, the first call did).
  void delayed_forward_module(RankState& rs, std::uint32_t autocast, std::uint32_t module, std::uint32_t call,
                              bool first_registering, BufferId global, std::uint32_t slot);
  /// fp8_autocast exit on `thread` (main, or autograd for a recompute that registers again).
  void delayed_autocast_exit(RankState& rs, ThreadId thread, std::uint32_t autocast, std::optional<BufferId> global,
                             const std::string& where);
  /// Launches the forward reduction --reduce-at deferred (rs.unreduced_fwd), if any, on `thread`.
  void delayed_deferred_reduction(RankState& rs, ThreadId thread, const std::string& where);
  /// One call's backward (autograd runs a repeated module's calls last first; the first of
  /// them copies back).
  void delayed_backward_module(RankState& rs, std::uint32_t autocast, std::uint32_t module, std::uint32_t call,
                               bool first_registering, BufferId global, std::uint32_t slot);
  /// One local amax of `dir` into `slot` (a buffer element); a keyed slot that a previous call
  /// of the module already wrote keeps the max of both (`combine`).
  void delayed_local_amax(RankState& rs, ThreadId thread, Direction dir, std::uint32_t module, Range input, Range slot,
                          bool combine, const std::string& origin);
  /// Where a registration in `slot` of a buffer of `slot_count` slots is copied back from: the
  /// slot itself (keyed), or the module's fixed first position (positional; past the buffer's
  /// end it is an InputError, as TE's list index raises).
  std::uint32_t copy_back_slot(RankState& rs, Direction dir, std::uint32_t module, std::uint32_t slot,
                               std::uint32_t slot_count, std::uint32_t autocast);
  void delayed_backward_reduction(RankState& rs, std::uint32_t autocast, std::optional<BufferId> global);
  /// Copies a pending registration back into history row 0 and runs the scale update.
  void delayed_consume(RankState& rs, ThreadId thread, Direction dir, std::uint32_t module, const std::string& origin);
  /// te-async: the wait on the previous reduction of `dir` (if one is outstanding), placed
  /// before or after `module`'s copy-back as the `wait` (forward) or `wait-bwd` knob says.
  void delayed_prepare(RankState& rs, ThreadId thread, Direction dir, std::uint32_t module, bool first_registering,
                       const std::string& origin);
  void delayed_epilogue(RankState& rs);
  /// Static registration: whether modules own fixed slots, and the global buffer's slot count.
  bool static_slots() const { return delayed() && knobs_.registration == Registration::static_slots; }
  /// --registration static: appends the modules that run in `iter` and never ran before to the
  /// rank's first-run order (at the start of an autocast's forward: its buffers hold them).
  void note_first_runs(RankState& rs, std::uint32_t iter) const;
  /// --registration static: `module`'s slot, its place in the rank's first-run order; none when
  /// it has not run yet.
  static std::optional<std::uint32_t> static_slot(const RankState& rs, std::uint32_t module);
  bool positional_slots() const { return delayed() && knobs_.slots == SlotKey::positional; }
  /// Slots a module's registration takes in one buffer: one per call when positional.
  std::uint32_t slots_per_registration(std::uint32_t iter, std::uint32_t module) const {
    return positional_slots() ? module_calls(knobs_, iter, module) : 1;
  }
  /// --unrun update: queues the slots of `dir`'s modules that did not register in `autocast`.
  void delayed_queue_unrun(RankState& rs, Direction dir, std::uint32_t autocast, std::optional<BufferId> global,
                           const std::vector<std::uint32_t>& registered);
  /// Copies back and updates the queued slots of `dir` (their reduction has been waited on).
  void delayed_update_unrun(RankState& rs, ThreadId thread, Direction dir, const std::string& where);
  /// te-async: work.wait() on the outstanding handle of `dir`, then the queued slots' updates.
  void delayed_wait(RankState& rs, ThreadId thread, Direction dir, const std::string& where);

  // current_scaling.cpp
  void current_forward_module(RankState& rs, ThreadId thread, std::uint32_t autocast, std::uint32_t module,
                              const std::string& what);
  void current_backward_module(RankState& rs, std::uint32_t autocast, std::uint32_t module);
  void current_quantize(RankState& rs, ThreadId thread, std::uint32_t autocast, std::uint32_t module, Direction dir,
                        std::uint32_t tensor, const std::string& what);

  bool delayed() const { return knobs_.protocol != ProtocolName::current_scaling; }
  /// Timed-run costs from the model description: a GEMM kernel's duration (`gemm-us`) or
  /// FLOPs (`hidden`, `tokens`), and the bytes one gradient bucket stands for.
  Op gemm(Op fill) const;
  std::uint64_t bucket_cost_bytes() const;
  std::uint64_t layer_params() const;
  const char* dir_tag(Direction dir) const { return dir == Direction::forward ? "fwd" : "bwd"; }

  ProtocolKnobs knobs_;
  Layout layout_;
  Groups grad_groups_, amax_groups_;
  std::vector<std::optional<CommId>> grad_comm_of_, amax_comm_of_, pp_comm_of_, tp_comm_of_;  // by rank
  std::vector<std::optional<CommId>> fsdp_comm_of_;  // by rank
  std::optional<CommId> world_comm_;  ///< --fsdp-amax-group world
  std::vector<std::string> comm_names_;
  std::uint32_t history_len_ = 1;
};

}  // namespace amaxcheck
