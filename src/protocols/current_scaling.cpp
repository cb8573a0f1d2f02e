// Current scaling: every quantization computes its tensor's amax, all-reduces it (MAX) over
// the amax group (by default the TP group, TE Linear's tp_group, for sequence-parallel tensors)
// and waits at once, then derives the scale from that amax alone (a history of one) and casts. An empty input (--empty)
// has an amax of 0: the quantizer joins the reduction with it (--empty-quantize join) or returns
// before the reduction (return-early), which leaves its peers waiting. With --sp-gather fp8 tensor 0
// is then all-gathered over the TP group, its amax reduced (TE's quantizer with_amax_reduction over
// the TP group) unless --sp-amax local leaves that all-reduce out.
#include <fmt/format.h>

#include "protocols/generator.h"
#include "protocols/schedule.h"

namespace amaxcheck {

void ProgramGenerator::current_quantize(RankState& rs, ThreadId thread, std::uint32_t a, std::uint32_t m,
                                        Direction dir, std::uint32_t t, const std::string& what) {
  const DirBuffers& d = rs.modules[m].dir[dir == Direction::forward ? 0 : 1];
  RankWriter& w = rs.writer;
  const std::string where = origin(a, m, what);
  const std::string tag = dir_tag(dir);
  const bool empty = input_empty(knobs_, rs.id, iter_of(knobs_, a), m);
  if (empty && knobs_.empty_quantize == EmptyQuantize::return_early) return;  // the early return: no amax, no reduction
  const Range input{d.input, t * knobs_.elems, knobs_.elems};
  const Range amax{d.history, t, 1};
  if (empty) {
    w.emit(thread, fill_op(rs.compute, amax, {0.0f}), "empty_amax_" + tag, fmt::format("{} (tensor {}, no elements)", where, t));
  } else {
    write_inputs(rs, thread, a, m, dir, where, t);
    w.emit(thread, local_amax_op(rs.compute, input, amax), "local_amax_" + tag, fmt::format("{} (tensor {})", where, t));
  }
  if (rs.amax_comm && !sp_local_amax(t)) write_amax_all_reduce(rs, thread, amax, tag, fmt::format("{} (tensor {})", where, t), true);
  ScaleUpdateParams params;
  params.tensors = 1;
  params.history_len = 1;
  params.algo = HistoryAlgo::most_recent;
  params.margin = knobs_.margin;
  params.format = format_of(dir);
  w.emit(thread, scale_update_op(rs.compute, params, amax, Range{d.scale, t, 1}, Range{d.scale_inv, t, 1}),
         "scale_update_" + tag, fmt::format("{} (tensor {}) scale from current amax", where, t));
  if (empty) return;  // nothing to cast
  w.emit(thread, cast_op(rs.compute, input, Range{d.scale, t, 1}, Range{d.fp8, t * knobs_.elems, knobs_.elems}, params.format),
         "cast_" + tag, fmt::format("{} (tensor {})", where, t));
  if (t == 0) write_sp_gather(rs, thread, m, dir, where);
}

void ProgramGenerator::current_forward_module(RankState& rs, ThreadId thread, std::uint32_t a, std::uint32_t m,
                                              const std::string& what) {
  fsdp_unshard(rs, thread, a, m, what);
  for (std::uint32_t t = 0; t < knobs_.fwd_tensors; ++t) current_quantize(rs, thread, a, m, Direction::forward, t, what);
  rs.writer.emit(thread,
                 gemm(fill_op(rs.compute, rs.writer.whole(rs.modules[m].activation), std::vector<float>(knobs_.elems, 1.0f))),
                 "gemm_fwd", origin(a, m, what + " GEMM"));
}

void ProgramGenerator::current_backward_module(RankState& rs, std::uint32_t a, std::uint32_t m) {
  if (knobs_.recompute) current_forward_module(rs, rs.autograd, a, m, "recompute forward");
  for (std::uint32_t t = 0; t < knobs_.bwd_tensors; ++t) {
    current_quantize(rs, rs.autograd, a, m, Direction::backward, t, "backward");
  }
  rs.writer.emit(rs.autograd,
                 gemm(fill_op(rs.compute, rs.writer.whole(rs.modules[m].dgrad), std::vector<float>(knobs_.elems, 1.0f))),
                 "gemm_dgrad", origin(a, m, "backward dgrad GEMM"));
}

}  // namespace amaxcheck
