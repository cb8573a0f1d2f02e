#include "protocols/generator.h"

#include <fmt/format.h>

#include <algorithm>

#include "protocols/reference_model.h"
#include "protocols/schedule.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

std::string indexed(const char* base, std::size_t index, std::size_t count) {
  return count == 1 ? std::string(base) : fmt::format("{}{}", base, index);
}

}  // namespace

ProgramGenerator::ProgramGenerator(const ProtocolKnobs& knobs)
    : knobs_(knobs), layout_(knobs), history_len_(history_length(knobs)) {}

std::string ProgramGenerator::origin(std::uint32_t autocast, std::optional<std::uint32_t> module,
                                     const std::string& what) const {
  std::string text = fmt::format("iter {}", iter_of(knobs_, autocast));
  if (knobs_.microbatches > 1) text += fmt::format(" / microbatch {}", autocast % knobs_.microbatches);
  if (module) text += fmt::format(" / module {}", *module);
  return text + " / " + what;
}

std::uint32_t ProgramGenerator::bucket_position(std::uint32_t bucket, std::uint32_t modules) const {
  if (!knobs_.grad_overlap) return modules - 1;
  // ceil((b + 1) * M / B) - 1: buckets spread over the backward, the last after module 0.
  return ((bucket + 1) * modules + knobs_.buckets - 1) / knobs_.buckets - 1;
}

void ProgramGenerator::add_group_comms(Scenario& scenario, const Groups& groups, const char* base,
                                       std::vector<std::optional<CommId>>& comm_of) {
  comm_of.assign(layout_.world(), std::nullopt);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto id = static_cast<CommId>(scenario.comms.size());
    scenario.comms.push_back(Communicator{indexed(base, g, groups.size()), groups[g]});
    for (RankId r : groups[g]) comm_of[r] = id;
  }
}

void ProgramGenerator::make_comms(Scenario& scenario) {
  grad_groups_ = layout_.grad_groups();
  amax_groups_ = layout_.amax_groups();
  grad_comm_of_.assign(layout_.world(), std::nullopt);
  amax_comm_of_.assign(layout_.world(), std::nullopt);
  // Groups of one rank need no collective (DDP and TE skip them too).
  for (std::size_t g = 0; g < grad_groups_.size(); ++g) {
    if (grad_groups_[g].size() < 2) continue;
    const auto id = static_cast<CommId>(scenario.comms.size());
    scenario.comms.push_back(Communicator{indexed("dp", g, grad_groups_.size()), grad_groups_[g]});
    for (RankId r : grad_groups_[g]) grad_comm_of_[r] = id;
  }
  // --sp-amax local with delayed scaling: the recipe's reduce_amax=False sets up no reduction at all.
  const bool reduces = !(delayed() && knobs_.sp_gather == SpGather::fp8 && knobs_.sp_amax == SpAmax::local);
  for (std::size_t g = 0; g < amax_groups_.size() && reduces; ++g) {
    const auto& group = amax_groups_[g];
    if (group.size() < 2) continue;
    std::optional<CommId> id;
    if (knobs_.comm == CommChoice::shared) {
      id = grad_comm_of_[group.front()];
      AMAX_CHECK(id && scenario.comms[*id].members == group, "shared amax group is not a gradient group");
    } else {
      id = static_cast<CommId>(scenario.comms.size());
      scenario.comms.push_back(Communicator{indexed("amax", g, amax_groups_.size()), group});
    }
    for (RankId r : group) amax_comm_of_[r] = id;
  }
  // The pipeline groups: one per (TP, CP, DP) index, members in stage order (member index =
  // stage), as Megatron-LM's pipeline-parallel group.
  if (pipelined(knobs_)) add_group_comms(scenario, layout_.partition({Dim::pp}), "pp", pp_comm_of_);
  // The TP groups (Megatron-LM's tensor-model-parallel group), member index = TP index.
  if (knobs_.sp_gather == SpGather::fp8) add_group_comms(scenario, layout_.partition({Dim::tp}), "tp", tp_comm_of_);
  fsdp_make_comms(scenario);
  for (const Communicator& comm : scenario.comms) comm_names_.push_back(comm.name);
}

void ProgramGenerator::setup_rank(RankState& rs) {
  RankWriter& w = rs.writer;
  rs.main = w.thread("main");
  rs.autograd = w.thread("autograd");
  rs.compute = w.stream("compute");
  rs.grad = w.stream("grad");
  rs.grad_comm = grad_comm_of_[rs.id];
  rs.amax_comm = amax_comm_of_[rs.id];
  rs.stage = layout_.stage(rs.id);
  rs.module_count = stage_module_count(knobs_, rs.stage);
  if (pipelined(knobs_)) rs.pp_comm = pp_comm_of_[rs.id];
  if (rs.amax_comm) rs.nccl = w.stream("nccl:" + comm_names_[*rs.amax_comm]);
  if (knobs_.sp_gather == SpGather::fp8) {
    rs.tp_comm = tp_comm_of_[rs.id];
    rs.tp_stream = w.stream("nccl:" + comm_names_[*rs.tp_comm]);
  }
  rs.backward_start = w.flag("backward_start");
  rs.backward_done = w.flag("backward_done");
  const auto& grad_group = grad_groups_[Layout::group_of(grad_groups_, rs.id)];
  rs.grad_members = static_cast<std::uint32_t>(grad_group.size());
  rs.grad_index = static_cast<std::uint32_t>(std::find(grad_group.begin(), grad_group.end(), rs.id) - grad_group.begin());

  for (std::uint32_t m = 0; m < rs.module_count; ++m) {
    ModuleBuffers mb;
    for (Direction dir : {Direction::forward, Direction::backward}) {
      const std::uint32_t tensors = tensor_count(knobs_, dir);
      const std::string prefix = fmt::format("m{}.{}.", m, dir_tag(dir));
      DirBuffers& d = mb.dir[dir == Direction::forward ? 0 : 1];
      d.input = w.buffer(prefix + "input", tensors * knobs_.elems);
      d.fp8 = w.buffer(prefix + "fp8", tensors * knobs_.elems);
      d.history = w.buffer(prefix + "amax_history", history_len_ * tensors);
      d.scale = w.buffer(prefix + "scale", tensors, std::vector<float>(tensors, 1.0f));
      d.scale_inv = w.buffer(prefix + "scale_inv", tensors, std::vector<float>(tensors, 1.0f));
    }
    const bool repeated = std::any_of(knobs_.repeats.begin(), knobs_.repeats.end(),
                                      [m](const EvalRule& rule) { return rule.module == m; });
    if (repeated && delayed() && !positional_slots()) {
      for (Direction dir : {Direction::forward, Direction::backward}) {
        mb.amax_pair[dir == Direction::forward ? 0 : 1] = w.buffer(fmt::format("m{}.{}.amax_pair", m, dir_tag(dir)), 2);
      }
    }
    if (rs.tp_comm) {
      for (Direction dir : {Direction::forward, Direction::backward}) {
        mb.sp_gathered[dir == Direction::forward ? 0 : 1] =
            w.buffer(fmt::format("m{}.{}.sp_gathered", m, dir_tag(dir)), knobs_.tp * knobs_.elems + 1);
      }
    }
    mb.activation = w.buffer(fmt::format("m{}.activation", m), knobs_.elems);
    mb.dgrad = w.buffer(fmt::format("m{}.dgrad", m), knobs_.elems);
    rs.modules.push_back(mb);
  }
  const std::uint32_t bucket_elems = rs.grad_members * knobs_.grad_elems;
  const bool scatter = knobs_.grad_op == GradOp::reduce_scatter && rs.grad_comm;
  for (std::uint32_t b = 0; b < knobs_.buckets; ++b) {
    rs.buckets.push_back(w.buffer(fmt::format("grad_bucket{}", b), bucket_elems));
    if (scatter) rs.shards.push_back(w.buffer(fmt::format("grad_shard{}", b), knobs_.grad_elems));
  }
  rs.params = w.buffer("params", knobs_.buckets * (scatter ? knobs_.grad_elems : bucket_elems));
  fsdp_setup_rank(rs);
  for (auto& pending : rs.pending) pending.assign(rs.module_count, std::nullopt);
  for (auto& fixed : rs.fixed_slot) fixed.assign(rs.module_count, std::nullopt);
  if (rs.pp_comm) {
    rs.act_in = w.buffer("pp.activation_in", knobs_.elems);
    rs.grad_in = w.buffer("pp.grad_in", knobs_.elems);
  }
}

void ProgramGenerator::write_inputs(RankState& rs, ThreadId thread, std::uint32_t autocast, std::uint32_t module,
                                    Direction dir, const std::string& where, std::uint32_t tensor, std::uint32_t call) {
  const DirBuffers& d = rs.modules[module].dir[dir == Direction::forward ? 0 : 1];
  const Range range{d.input, tensor * knobs_.elems, knobs_.elems};
  rs.writer.emit(thread, fill_op(rs.compute, range, tensor_values(knobs_, rs.id, autocast, module, dir, tensor, call)),
                 fmt::format("fill_input_{}", dir_tag(dir)), fmt::format("{} (tensor {})", where, tensor));
}

void ProgramGenerator::write_side_collective(RankState& rs, ThreadId thread, StreamId side, Op collective,
                                             const std::string& events, const std::string& name, const std::string& where,
                                             bool sync) {
  RankWriter& w = rs.writer;
  const EventId ready = w.event(events + ".ready");
  const EventId done = w.event(events + ".done");
  w.emit(thread, event_record_op(rs.compute, ready), "record_" + events + "_ready", where);
  w.emit(thread, stream_wait_event_op(side, ready), "nccl_wait_" + events + "_ready", where);
  collective.stream = side;
  w.emit(thread, std::move(collective), name, where);
  w.emit(thread, event_record_op(side, done), "record_" + events + "_done", where);
  if (sync) w.emit(thread, work_wait_op(rs.compute, done), "wait_" + events, where);
}

void ProgramGenerator::write_amax_all_reduce(RankState& rs, ThreadId thread, Range range, const std::string& tag,
                                             const std::string& where, bool sync) {
  AMAX_CHECK(rs.amax_comm.has_value(), "amax reduction without a communicator");
  write_side_collective(rs, thread, rs.nccl, collective_op(OpKind::all_reduce, rs.nccl, *rs.amax_comm, ReduceOp::max, range, range),
                        "amax_" + tag, fmt::format("{}_{}", amax_reduction_name_prefix, tag), where, sync);
}

void ProgramGenerator::write_sp_gather(RankState& rs, ThreadId thread, std::uint32_t m, Direction dir,
                                       const std::string& where) {
  if (!rs.tp_comm) return;
  const int index = dir == Direction::forward ? 0 : 1;
  const DirBuffers& d = rs.modules[m].dir[index];
  const BufferId gathered = rs.modules[m].sp_gathered[index].value();
  const std::uint32_t count = knobs_.tp * knobs_.elems;
  const std::string tag = dir_tag(dir);
  write_side_collective(rs, thread, rs.tp_stream,
                        collective_op(OpKind::all_gather, rs.tp_stream, *rs.tp_comm, ReduceOp::max, Range{d.fp8, 0, knobs_.elems},
                                      Range{gathered, 0, count}),
                        "sp_gather_" + tag, "sp_gather_" + tag, where + " (tensor 0, sequence-parallel all-gather)", true);
  // The gathered Float8Tensor keeps the local tensor's scale_inv for every peer's shard.
  rs.writer.emit(thread, copy_op(rs.compute, Range{d.scale_inv, 0, 1}, Range{gathered, count, 1}), "sp_gathered_scale_inv_" + tag,
                 where + " (tensor 0, the gathered tensor's scale_inv: this rank's)");
}

void ProgramGenerator::write_forward(RankState& rs, std::uint32_t a) {
  write_forward_pass(rs, a);
  write_backward_call(rs, a);
}

void ProgramGenerator::write_forward_pass(RankState& rs, std::uint32_t a) {
  const std::uint32_t iter = iter_of(knobs_, a);
  RankWriter& w = rs.writer;
  if (delayed()) {
    std::vector<std::uint32_t> registered;
    for (std::uint32_t m = 0; m < rs.module_count; ++m) {
      if (module_registers(knobs_, rs.id, iter, m)) registered.push_back(m);
    }
    if (knobs_.reduce_at == ReducePoint::next_entry) {
      delayed_deferred_reduction(rs, rs.main, origin(a, std::nullopt, "fp8_autocast entry"));
    }
    std::optional<BufferId> global;
    if (static_slots()) note_first_runs(rs, iter);
    auto slots = static_cast<std::uint32_t>(rs.first_run.size());
    for (std::uint32_t m : registered) slots += static_slots() ? 0 : slots_per_registration(iter, m);
    if (slots > 0) global = w.buffer(fmt::format("amax_fwd.a{}", a), slots * knobs_.fwd_tensors);
    std::uint32_t slot = 0;
    for (std::uint32_t m = 0; m < rs.module_count; ++m) {
      if (!module_runs(knobs_, rs.id, iter, m)) continue;
      const bool registers = module_registers(knobs_, rs.id, iter, m);
      for (std::uint32_t call = 0; call < module_calls(knobs_, iter, m); ++call) {
        // Positional: each call takes the next slot; keyed: the module's one slot.
        const std::uint32_t at = static_slots() ? static_slot(rs, m).value() : slot + (positional_slots() ? call : 0);
        delayed_forward_module(rs, a, m, call, registers && m == registered.front(), global.value_or(0), at);
      }
      if (registers) slot += slots_per_registration(iter, m);
    }
    delayed_queue_unrun(rs, Direction::forward, a, global, registered);
    delayed_autocast_exit(rs, rs.main, a, global, origin(a, std::nullopt, "fp8_autocast exit"));
  } else {
    for (std::uint32_t m = 0; m < rs.module_count; ++m) {
      if (module_runs(knobs_, rs.id, iter, m)) current_forward_module(rs, rs.main, a, m, "forward");
    }
  }
}

void ProgramGenerator::note_first_runs(RankState& rs, std::uint32_t iter) const {
  for (std::uint32_t m = 0; m < rs.module_count; ++m) {
    if (module_runs(knobs_, rs.id, iter, m) && !static_slot(rs, m)) rs.first_run.push_back(m);
  }
}

std::optional<std::uint32_t> ProgramGenerator::static_slot(const RankState& rs, std::uint32_t module) {
  const auto at = std::find(rs.first_run.begin(), rs.first_run.end(), module);
  if (at == rs.first_run.end()) return std::nullopt;
  return static_cast<std::uint32_t>(at - rs.first_run.begin());
}

void ProgramGenerator::write_backward_call(RankState& rs, std::uint32_t a) {
  const std::uint32_t iter = iter_of(knobs_, a);
  RankWriter& w = rs.writer;
  // loss.backward(): the autograd thread runs the backward; main blocks until it is done.
  w.emit(rs.main, host_signal_op(rs.backward_start), "loss_backward", origin(a, std::nullopt, "loss.backward()"));
  w.emit(rs.main, host_wait_op(rs.backward_done, a + 1), "backward_returned", origin(a, std::nullopt, "loss.backward()"));
  if (a % knobs_.microbatches == knobs_.microbatches - 1) write_optimizer(rs, iter);
}

void ProgramGenerator::write_backward(RankState& rs, std::uint32_t a) {
  const std::uint32_t iter = iter_of(knobs_, a);
  const bool last_microbatch = a % knobs_.microbatches == knobs_.microbatches - 1;
  RankWriter& w = rs.writer;
  w.emit(rs.autograd, host_wait_op(rs.backward_start, a + 1), "backward_start", origin(a, std::nullopt, "autograd engine"));

  std::vector<std::uint32_t> registered;  // in backward order
  std::optional<std::uint32_t> forward_first;  // the autocast's first module (TE's fp8_meta["first_module"])
  for (std::uint32_t m = rs.module_count; m-- > 0;) {
    if (module_backprops(knobs_, rs.id, iter, m)) registered.push_back(m);
    if (module_registers(knobs_, rs.id, iter, m)) forward_first = m;
  }
  std::optional<BufferId> global;
  // Static slots: TE registered the backward amaxes with the forward ones, at the first forward.
  auto slots = static_cast<std::uint32_t>(rs.first_run.size());
  for (std::uint32_t m : registered) slots += static_slots() ? 0 : slots_per_registration(iter, m);
  if (delayed() && slots > 0) global = w.buffer(fmt::format("amax_bwd.a{}", a), slots * knobs_.bwd_tensors);
  // Where the backward amax reduction goes relative to the buckets launched at the same point:
  // TE issues it inside the module's backward, before DDP's hook; with a rank-dependent order
  // the odd members of each gradient group launch it after the buckets instead.
  const bool reduce_after_buckets = knobs_.amax_order == AmaxOrder::rank_dependent && rs.grad_index % 2 == 1;
  std::uint32_t slot = 0;
  for (std::uint32_t p = 0; p < rs.module_count; ++p) {
    const std::uint32_t m = rs.module_count - 1 - p;
    const bool registers = module_backprops(knobs_, rs.id, iter, m);
    if (registers) {
      if (delayed()) {
        // A repeated module's calls backward last call first; positional: each takes the next slot.
        const std::uint32_t calls = module_calls(knobs_, iter, m);
        for (std::uint32_t c = 0; c < calls; ++c) {
          const std::uint32_t at = static_slots() ? static_slot(rs, m).value() : slot + (positional_slots() ? c : 0);
          delayed_backward_module(rs, a, m, calls - 1 - c, m == registered.front(), global.value_or(0), at);
        }
        slot += slots_per_registration(iter, m);
      } else {
        current_backward_module(rs, a, m);
      }
      // wgrad: this module's weight gradients land in the bucket that goes out next (an
      // --eval-backward module's weights are frozen: dgrad only).
      std::uint32_t bucket = 0;
      while (bucket_position(bucket, rs.module_count) < p) ++bucket;
      if (!module_eval_backward(knobs_, iter, m)) {
        w.emit(rs.autograd,
               gemm(fill_op(rs.compute, w.whole(rs.buckets[bucket]),
                       std::vector<float>(rs.grad_members * knobs_.grad_elems, static_cast<float>(1 + (rs.id + a + m) % 4)),
                       0)),
               "gemm_wgrad", origin(a, m, fmt::format("backward wgrad into bucket {}", bucket)));
      }
    }
    // The backward reduction goes out after the last module to run backward (--reduce-at-bwd
    // last-backward), or (first-module) at the end of the forward's first module's backward, which
    // a frozen module never reaches. Static slots: every rank reduces its buffer, whether or not any
    // of its modules ran backward (with first-module and no module that ran forward, at the end of
    // the backward).
    const bool reduce_here =
        delayed() && (reduce_at_bwd_of(knobs_) == BwdReducePoint::first_module
                          ? (registers && m == forward_first.value_or(m)) || (static_slots() && !forward_first && m == 0)
                          : (registers && m == registered.back() && !static_slots()) || (static_slots() && m == 0));
    if (reduce_here && !reduce_after_buckets) delayed_backward_reduction(rs, a, global);
    if (last_microbatch) write_buckets(rs, a, p);
    if (reduce_here && reduce_after_buckets) delayed_backward_reduction(rs, a, global);
  }
  if (delayed()) delayed_queue_unrun(rs, Direction::backward, a, global, registered);
  if (rs.backward_reduced) delayed_update_unrun(rs, rs.autograd, Direction::backward, origin(a, std::nullopt, "after the backward reduction"));
  rs.backward_reduced = false;
  if (last_microbatch && rs.grad_comm) {
    // DDP's finalize: the compute stream waits for every bucket before the optimizer runs.
    const EventId done = w.event("grad.done");
    w.emit(rs.autograd, event_record_op(rs.grad, done), "record_grad_done", origin(a, std::nullopt, "DDP finalize"));
    w.emit(rs.autograd, work_wait_op(rs.compute, done), "wait_grad_buckets", origin(a, std::nullopt, "DDP finalize"));
  }
  w.emit(rs.autograd, host_signal_op(rs.backward_done), "backward_done", origin(a, std::nullopt, "autograd engine"));
}

void ProgramGenerator::write_buckets(RankState& rs, std::uint32_t a, std::uint32_t position) {
  if (!rs.grad_comm) return;
  RankWriter& w = rs.writer;
  const EventId ready = w.event("grad.ready");
  for (std::uint32_t b = 0; b < knobs_.buckets; ++b) {
    if (bucket_position(b, rs.module_count) != position) continue;
    const std::string where = origin(a, std::nullopt, fmt::format("DDP bucket {}", b));
    w.emit(rs.autograd, event_record_op(rs.compute, ready), "record_grad_ready", where);
    w.emit(rs.autograd, stream_wait_event_op(rs.grad, ready), "grad_wait_ready", where);
    const bool scatter = knobs_.grad_op == GradOp::reduce_scatter;
    const Range in = w.whole(rs.buckets[b]);
    const Range out = scatter ? w.whole(rs.shards[b]) : in;
    Op bucket = collective_op(scatter ? OpKind::reduce_scatter : OpKind::all_reduce, rs.grad, *rs.grad_comm,
                              ReduceOp::sum, in, out);
    bucket.cost_bytes = bucket_cost_bytes();
    w.emit(rs.autograd, std::move(bucket), fmt::format("grad_bucket_{}", b), where);
  }
}

void ProgramGenerator::write_optimizer(RankState& rs, std::uint32_t iter) {
  RankWriter& w = rs.writer;
  const bool scatter = !rs.shards.empty();
  for (std::uint32_t b = 0; b < knobs_.buckets; ++b) {
    const Range from = w.whole(scatter ? rs.shards[b] : rs.buckets[b]);
    const Range to{rs.params, b * from.count, from.count};
    w.emit(rs.main, copy_op(rs.compute, from, to), "optimizer_step",
           fmt::format("iter {} / optimizer step (bucket {})", iter, b));
  }
}

// A module stands for one transformer layer: QKV, projection and the two MLP GEMMs hold
// 4h^2 + 8h^2 parameters; each of its GEMMs (forward, dgrad, wgrad) costs 2 * tokens * 12h^2.
std::uint64_t ProgramGenerator::layer_params() const {
  const std::uint64_t h = knobs_.hidden;
  return 12 * h * h;
}

Op ProgramGenerator::gemm(Op fill) const {
  if (knobs_.hidden == 0) {
    fill.cost_us = knobs_.gemm_us;
  } else {
    fill.cost_flops = 2 * static_cast<std::uint64_t>(knobs_.tokens) * layer_params();
  }
  return fill;
}

std::uint64_t ProgramGenerator::bucket_cost_bytes() const {
  if (knobs_.hidden == 0) return knobs_.bucket_bytes;
  const std::uint64_t grad_bytes = knobs_.modules * layer_params() * 4;  // fp32 gradients
  return (grad_bytes + knobs_.buckets - 1) / knobs_.buckets;
}

Scenario ProgramGenerator::build() {
  Scenario scenario;
  scenario.kernels = knobs_.kernels;
  make_comms(scenario);
  scenario.ranks.resize(layout_.world());
  for (RankId r = 0; r < layout_.world(); ++r) {
    Rank& rank = scenario.ranks[r];
    const Coord c = layout_.coord(r);
    rank.name = fmt::format("rank{} (dp{} tp{} pp{} cp{})", r, c.dp, c.tp, c.pp, c.cp);
    rank.device = r % knobs_.ranks_per_node;
    RankState rs(rank);
    rs.id = r;
    setup_rank(rs);
    if (pipelined(knobs_)) {
      for (std::uint32_t iter = 0; iter < knobs_.iters; ++iter) {
        fsdp_iteration_start(rs, iter);
        write_pipeline_iteration(rs, iter);
      }
    } else {
      for (std::uint32_t a = 0; a < autocast_count(knobs_); ++a) {
        if (a % knobs_.microbatches == 0) fsdp_iteration_start(rs, iter_of(knobs_, a));
        write_forward(rs, a);
        write_backward(rs, a);
      }
    }
    if (delayed()) delayed_epilogue(rs);
    rs.writer.emit(rs.main, device_synchronize_op(), "device_synchronize", "end of training: final values settle");
  }
  return scenario;
}

}  // namespace amaxcheck
