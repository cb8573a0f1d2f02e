// Delayed scaling (te-sync, te-async): the FP8 parts of each module, as TransformerEngine's
// prepare_forward / _prepare_backward and fp8_autocast exit do them.
//
// Per module and autocast: the module's prepare step copies its previous registration back
// from that autocast's global buffer into amax_history row 0 and runs amax_and_scale_update;
// then it casts its tensors, writing each local amax into its slot of this autocast's global
// buffer (the slots are views, i.e. Ranges, of that buffer). At autocast exit the global
// buffer is all-reduced (MAX) over the amax group. te-sync waits at once (work.wait() on the
// compute stream); te-async keeps the handle, and the first registering module of the next
// autocast waits on it, before or after its own copy-back (the seed hazard). The backward
// mirrors this with its own buffer, handle and E5M2 scales; its reduction goes out after the
// last module to run backward, or at the end of the backward of the forward's first module
// (--reduce-at-bwd; te-async's default, as TE v0.8-v1.5 did), which a --frozen first module never
// reaches. Forward and backward place their waits separately (`wait`, `wait-bwd`): the TE release
// with the bug waited late in the forward only.
//
// Variants: --reduce-at moves the forward reduction to the next autocast's entry or into its
// first registering module (and, with --reduce-at-bwd auto, ties te-sync's backward one to the
// forward's first module); with
// --registration static a module takes its slots in every buffer at its first forward on the rank,
// in first-run order (TE v1.6+'s add_fp8_tensors_to_global_buffer; note_first_runs), so a rank
// that first runs a module later than its peers reduces a shorter buffer, and one that first ran
// them in another order mixes their amaxes; with --unrun update the slots of modules that did not
// register are copied back and updated once their reduction is waited on (delayed_update_unrun).
// Static slots give an autocast in which no module registered a buffer too (once one has run); with first-module, no first module launches it, so it goes out at that autocast's
// exit (forward) or at the end of its backward. A module called twice (--repeat) maxes both
// calls' amaxes into its one slot (--slots keyed, delayed_local_amax) or takes a slot per call and
// copies back from the position its first registration fixed (positional, copy_back_slot). With
// --recompute-amax register the recomputed forward is an autocast of its own: prepare, register
// into its own buffer, exit. With --sp-gather fp8 every cast of tensor 0 (forward, recompute,
// backward) is followed by its sequence-parallel all-gather over the TP group (write_sp_gather);
// --sp-amax local left every amax reduction out when the communicators were made.
#include <fmt/format.h>

#include <algorithm>

#include "protocols/generator.h"
#include "protocols/schedule.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

int index_of(Direction dir) { return dir == Direction::forward ? 0 : 1; }

}  // namespace

void ProgramGenerator::delayed_consume(RankState& rs, ThreadId thread, Direction dir, std::uint32_t module,
                                       const std::string& where) {
  auto& pending = rs.pending[index_of(dir)][module];
  if (!pending) return;
  const DirBuffers& d = rs.modules[module].dir[index_of(dir)];
  const std::uint32_t tensors = tensor_count(knobs_, dir);
  RankWriter& w = rs.writer;
  const Range slot{pending->global, pending->slot * tensors, tensors};
  w.emit(thread, copy_op(rs.compute, slot, Range{d.history, 0, tensors}), fmt::format("copy_back_{}", dir_tag(dir)),
         fmt::format("{} copy-back (from autocast {})", where, pending->autocast));
  ScaleUpdateParams params;
  params.tensors = tensors;
  params.history_len = history_len_;
  params.algo = knobs_.algo;
  params.margin = knobs_.margin;
  params.format = format_of(dir);
  w.emit(thread, scale_update_op(rs.compute, params, w.whole(d.history), w.whole(d.scale), w.whole(d.scale_inv)),
         fmt::format("scale_update_{}", dir_tag(dir)), where + " amax_and_scale_update");
  pending.reset();
}

void ProgramGenerator::delayed_prepare(RankState& rs, ThreadId thread, Direction dir, std::uint32_t module,
                                       bool first_registering, const std::string& where) {
  if (dir == Direction::forward && first_registering && knobs_.reduce_at == ReducePoint::first_module) {
    delayed_deferred_reduction(rs, thread, where + " (first module)");
  }
  const bool wait_here = first_registering && rs.handle_outstanding[index_of(dir)];
  const WaitPoint point = dir == Direction::forward ? knobs_.wait : knobs_.wait_bwd;
  if (wait_here && point == WaitPoint::before_copy) delayed_wait(rs, thread, dir, where);
  delayed_consume(rs, thread, dir, module, where);
  if (wait_here && point == WaitPoint::after_copy) delayed_wait(rs, thread, dir, where);
}

void ProgramGenerator::delayed_wait(RankState& rs, ThreadId thread, Direction dir, const std::string& where) {
  rs.writer.emit(thread, work_wait_op(rs.compute, rs.writer.event(fmt::format("amax_{}.done", dir_tag(dir)))),
                 fmt::format("wait_amax_{}", dir_tag(dir)), where + " handle.wait()");
  rs.handle_outstanding[index_of(dir)] = false;
  delayed_update_unrun(rs, thread, dir, where);
}

void ProgramGenerator::delayed_queue_unrun(RankState& rs, Direction dir, std::uint32_t a, std::optional<BufferId> global,
                                           const std::vector<std::uint32_t>& registered) {
  if (!static_slots() || knobs_.unrun != UnrunUpdate::update || !global) return;
  for (std::uint32_t m = 0; m < rs.module_count; ++m) {
    const std::optional<std::uint32_t> slot = static_slot(rs, m);  // none: not in the buffer yet
    if (slot && std::find(registered.begin(), registered.end(), m) == registered.end()) {
      rs.unrun[index_of(dir)].emplace_back(m, Pending{*global, *slot, a});
    }
  }
  // Without a reduction (a group of one rank) the slots are final at once.
  if (!rs.amax_comm) delayed_update_unrun(rs, dir == Direction::forward ? rs.main : rs.autograd, dir, origin(a, std::nullopt, "unrun modules"));
}

void ProgramGenerator::delayed_update_unrun(RankState& rs, ThreadId thread, Direction dir, const std::string& where) {
  for (const auto& [module, slot] : rs.unrun[index_of(dir)]) {
    // Updates follow the autocasts: an older registration of the module is consumed first, a
    // newer one (a slot whose reduction came late) stays pending.
    const std::string what = fmt::format("{} / module {} (did not register)", where, module);
    std::optional<Pending>& own = rs.pending[index_of(dir)][module];
    if (own && own->autocast < slot.autocast) delayed_consume(rs, thread, dir, module, what);
    const std::optional<Pending> newer = own;
    own = slot;
    delayed_consume(rs, thread, dir, module, what);
    own = newer;
  }
  rs.unrun[index_of(dir)].clear();
}

std::uint32_t ProgramGenerator::copy_back_slot(RankState& rs, Direction dir, std::uint32_t module, std::uint32_t slot,
                                               std::uint32_t slot_count, std::uint32_t a) {
  if (!positional_slots()) return slot;
  std::optional<std::uint32_t>& fixed = rs.fixed_slot[index_of(dir)][module];
  if (!fixed) fixed = slot;
  if (*fixed >= slot_count) {
    throw InputError(fmt::format(
        "--slots positional: on rank {}, module {}'s {} slot is {} (its first registration's), but autocast {}'s buffer "
        "has {} slots: TransformerEngine's list index raises there, which this model does not represent",
        rs.id, module, to_string(dir), *fixed, a, slot_count));
  }
  return *fixed;
}

void ProgramGenerator::delayed_local_amax(RankState& rs, ThreadId thread, Direction dir, std::uint32_t m, Range input,
                                          Range slot, bool combine, const std::string& where) {
  RankWriter& w = rs.writer;
  const std::string name = fmt::format("local_amax_{}", dir_tag(dir));
  if (!combine) {
    w.emit(thread, local_amax_op(rs.compute, input, slot), name, where);
    return;
  }
  // TE's amax kernels max into amax_history[0], which the slot views: slot = max(slot, amax).
  const auto pair = rs.modules[m].amax_pair[index_of(dir)];
  AMAX_CHECK(pair.has_value(), "a repeated module without its amax pair buffer");
  w.emit(thread, copy_op(rs.compute, slot, Range{*pair, 0, 1}), name + "_keep", where + " (the earlier call's amax)");
  w.emit(thread, local_amax_op(rs.compute, input, Range{*pair, 1, 1}), name, where);
  w.emit(thread, local_amax_op(rs.compute, w.whole(*pair), slot), name + "_combine", where + " (max of both calls)");
}

void ProgramGenerator::delayed_forward_module(RankState& rs, std::uint32_t a, std::uint32_t m, std::uint32_t call,
                                              bool first_registering, BufferId global, std::uint32_t slot) {
  const std::uint32_t iter = iter_of(knobs_, a);
  const bool registers = module_registers(knobs_, rs.id, iter, m);
  const DirBuffers& d = rs.modules[m].dir[0];
  RankWriter& w = rs.writer;
  const std::string what = registers ? "forward" : "forward (eval)";
  const std::string where = origin(a, m, call == 0 ? what : fmt::format("{}, call {}", what, call + 1));
  // A later call casts with the scale the first one's update set (TE updates once per autocast).
  if (call == 0) delayed_prepare(rs, rs.main, Direction::forward, m, first_registering, where);
  const bool empty = input_empty(knobs_, rs.id, iter, m);
  const bool combine = call > 0 && !positional_slots();  // keyed: the first call's slot again
  for (std::uint32_t t = 0; t < knobs_.fwd_tensors; ++t) {
    const Range amax_slot{global, slot * knobs_.fwd_tensors + t, 1};
    if (empty) {  // no elements: the amax slot gets 0, nothing is cast
      if (registers && !combine) {
        w.emit(rs.main, fill_op(rs.compute, amax_slot, {0.0f}), "empty_amax_fwd",
               fmt::format("{} (tensor {}, no elements -> global buffer slot {})", where, t, slot));
      }
      continue;
    }
    write_inputs(rs, rs.main, a, m, Direction::forward, where, t, call);
    const Range input{d.input, t * knobs_.elems, knobs_.elems};
    if (registers) {
      delayed_local_amax(rs, rs.main, Direction::forward, m, input, amax_slot, combine,
                         fmt::format("{} (tensor {} -> global buffer slot {})", where, t, slot));
    }
    w.emit(rs.main, cast_op(rs.compute, input, Range{d.scale, t, 1}, Range{d.fp8, t * knobs_.elems, knobs_.elems},
                            Fp8Format::e4m3),
           "cast_fwd", fmt::format("{} (tensor {})", where, t));
    if (t == 0) write_sp_gather(rs, rs.main, m, Direction::forward, where);
  }
  w.emit(rs.main, gemm(fill_op(rs.compute, w.whole(rs.modules[m].activation), std::vector<float>(knobs_.elems, 1.0f))),
         "gemm_fwd", where + " GEMM");
  if (registers && call == 0) {
    const std::uint32_t slot_count = w.whole(global).count / knobs_.fwd_tensors;
    rs.pending[0][m] = Pending{global, copy_back_slot(rs, Direction::forward, m, slot, slot_count, a), a};
  }
}

void ProgramGenerator::delayed_autocast_exit(RankState& rs, ThreadId thread, std::uint32_t a, std::optional<BufferId> global,
                                             const std::string& where) {
  if (!global || !rs.amax_comm) return;
  // Static slots give every autocast a buffer once a module has run, also one in which no module
  // registered, so no first module launched the previous one: it goes out here, ahead of this one.
  delayed_deferred_reduction(rs, thread, where + " (no first module ran)");
  rs.unreduced_fwd = Pending{*global, 0, a};
  if (knobs_.reduce_at == ReducePoint::exit) delayed_deferred_reduction(rs, thread, where);
}

void ProgramGenerator::delayed_deferred_reduction(RankState& rs, ThreadId thread, const std::string& where) {
  if (!rs.unreduced_fwd) return;
  const bool sync = knobs_.protocol == ProtocolName::te_sync;
  const std::string reduces =
      knobs_.reduce_at == ReducePoint::exit ? where : fmt::format("{} (reduces autocast {})", where, rs.unreduced_fwd->autocast);
  write_amax_all_reduce(rs, thread, rs.writer.whole(rs.unreduced_fwd->global), "fwd", reduces, sync);
  if (!sync) rs.handle_outstanding[0] = true;
  rs.unreduced_fwd.reset();
  if (sync) delayed_update_unrun(rs, thread, Direction::forward, reduces);
}

void ProgramGenerator::delayed_backward_module(RankState& rs, std::uint32_t a, std::uint32_t m, std::uint32_t call,
                                               bool first_registering, BufferId global, std::uint32_t slot) {
  const DirBuffers& fwd = rs.modules[m].dir[0];
  const DirBuffers& bwd = rs.modules[m].dir[1];
  RankWriter& w = rs.writer;
  const std::uint32_t calls = module_calls(knobs_, iter_of(knobs_, a), m);
  const bool first_call = call + 1 == calls;  // autograd runs the last call's backward first
  const std::string where = origin(a, m, calls == 1 ? std::string("backward") : fmt::format("backward, call {}", call + 1));
  const bool empty = input_empty(knobs_, rs.id, iter_of(knobs_, a), m);
  if (first_call) delayed_prepare(rs, rs.autograd, Direction::backward, m, first_registering, where);
  if (knobs_.recompute) {
    // Recomputation outside the autocast: the forward casts run again, with the saved forward
    // scales and no amax registration (--recompute-amax skip), or (register) in an fp8_autocast
    // of their own: its entry, the module's prepare step (copy-back and update from the
    // forward's registration), a registration in its own buffer and that autocast's exit.
    const std::string again = origin(a, m, calls == 1 ? std::string("recompute forward")
                                                      : fmt::format("recompute forward, call {}", call + 1));
    const bool registers_again = knobs_.recompute_amax == RecomputeAmax::register_again;
    std::optional<BufferId> again_buffer;
    if (registers_again) {
      if (knobs_.reduce_at == ReducePoint::next_entry) {
        delayed_deferred_reduction(rs, rs.autograd, again + " fp8_autocast entry");
      }
      delayed_prepare(rs, rs.autograd, Direction::forward, m, true, again);
      again_buffer = w.buffer(calls == 1 ? fmt::format("amax_fwd.a{}.recompute_m{}", a, m)
                                         : fmt::format("amax_fwd.a{}.recompute_m{}_call{}", a, m, call + 1),
                              knobs_.fwd_tensors);
    }
    for (std::uint32_t t = 0; t < knobs_.fwd_tensors; ++t) {
      const std::string tensor = fmt::format("{} (tensor {})", again, t);
      if (empty) {
        if (registers_again) w.emit(rs.autograd, fill_op(rs.compute, Range{*again_buffer, t, 1}, {0.0f}), "empty_amax_fwd", tensor);
        continue;
      }
      write_inputs(rs, rs.autograd, a, m, Direction::forward, again, t, call);
      const Range input{fwd.input, t * knobs_.elems, knobs_.elems};
      if (registers_again) {
        delayed_local_amax(rs, rs.autograd, Direction::forward, m, input, Range{*again_buffer, t, 1}, false,
                           fmt::format("{} -> recompute buffer slot 0", tensor));
      }
      w.emit(rs.autograd,
             cast_op(rs.compute, input, Range{fwd.scale, t, 1}, Range{fwd.fp8, t * knobs_.elems, knobs_.elems},
                     Fp8Format::e4m3),
             "cast_fwd", tensor);
      if (t == 0) write_sp_gather(rs, rs.autograd, m, Direction::forward, again);
    }
    w.emit(rs.autograd,
           gemm(fill_op(rs.compute, w.whole(rs.modules[m].activation), std::vector<float>(knobs_.elems, 1.0f))),
           "gemm_fwd", again + " GEMM");
    if (registers_again) {
      rs.pending[0][m] = Pending{*again_buffer, 0, a};
      delayed_autocast_exit(rs, rs.autograd, a, again_buffer, again + " fp8_autocast exit");
    }
  }
  const bool combine = !first_call && !positional_slots();  // keyed: the first backward's slot again
  for (std::uint32_t t = 0; t < knobs_.bwd_tensors; ++t) {
    const Range amax_slot{global, slot * knobs_.bwd_tensors + t, 1};
    if (empty) {
      if (!combine) {
        w.emit(rs.autograd, fill_op(rs.compute, amax_slot, {0.0f}), "empty_amax_bwd",
               fmt::format("{} (tensor {}, no elements -> global buffer slot {})", where, t, slot));
      }
      continue;
    }
    write_inputs(rs, rs.autograd, a, m, Direction::backward, where, t, call);
    const Range input{bwd.input, t * knobs_.elems, knobs_.elems};
    delayed_local_amax(rs, rs.autograd, Direction::backward, m, input, amax_slot, combine,
                       fmt::format("{} (tensor {} -> global buffer slot {})", where, t, slot));
    w.emit(rs.autograd,
           cast_op(rs.compute, input, Range{bwd.scale, t, 1}, Range{bwd.fp8, t * knobs_.elems, knobs_.elems},
                   Fp8Format::e5m2),
           "cast_bwd", fmt::format("{} (tensor {})", where, t));
    if (t == 0) write_sp_gather(rs, rs.autograd, m, Direction::backward, where);
  }
  w.emit(rs.autograd, gemm(fill_op(rs.compute, w.whole(rs.modules[m].dgrad), std::vector<float>(knobs_.elems, 1.0f))),
         "gemm_dgrad", where + " dgrad GEMM");
  if (first_call) {
    const std::uint32_t slot_count = w.whole(global).count / knobs_.bwd_tensors;
    rs.pending[1][m] = Pending{global, copy_back_slot(rs, Direction::backward, m, slot, slot_count, a), a};
  }
}

void ProgramGenerator::delayed_backward_reduction(RankState& rs, std::uint32_t a, std::optional<BufferId> global) {
  if (!global || !rs.amax_comm) return;
  const bool sync = knobs_.protocol == ProtocolName::te_sync;
  write_amax_all_reduce(rs, rs.autograd, rs.writer.whole(*global), "bwd",
                        origin(a, std::nullopt, "end of the first module's backward"), sync);
  if (!sync) rs.handle_outstanding[1] = true;
  rs.backward_reduced = sync;  // te-sync: the queued slots update once the backward is written
}

void ProgramGenerator::delayed_epilogue(RankState& rs) {
  // The next autocast would consume the last reductions; do it here so the final values are
  // the ones every rank must agree on.
  const std::uint32_t last_iter = knobs_.iters - 1;
  delayed_deferred_reduction(rs, rs.main, fmt::format("after iter {} / the next fp8_autocast", last_iter));
  for (Direction dir : {Direction::forward, Direction::backward}) {
    bool first = true;
    for (std::uint32_t m = 0; m < rs.module_count; ++m) {
      if (!rs.pending[index_of(dir)][m]) continue;
      const std::string where = fmt::format("after iter {} / module {} / final {} update", last_iter, m,
                                            dir == Direction::forward ? "forward" : "backward");
      delayed_prepare(rs, rs.main, dir, m, first, where);
      first = false;
    }
    // Static slots of modules that did not register in the last autocasts.
    const std::string where = fmt::format("after iter {} / final {} update", last_iter, dir == Direction::forward ? "forward" : "backward");
    if (rs.handle_outstanding[index_of(dir)]) {
      delayed_wait(rs, rs.main, dir, where);
    } else {
      delayed_update_unrun(rs, rs.main, dir, where);
    }
  }
}

}  // namespace amaxcheck
