// FSDP-style sharded FP8 weights (--fsdp), as torchao float8 does them under FSDP2's fully_shard
// with dynamic (current) scaling. Every module's weight is sharded over the FSDP group (DP x CP
// within a TP index and a stage, its own communicator "fsdp"). Its pre-forward hook
// (fsdp_pre_all_gather) casts the shard to FP8 and all-gathers the bytes; fsdp_post_all_gather
// builds the gathered Float8Tensor with this rank's scale, so the peers must cast with one scale.
// The scale comes from the weight amax all-reduced over --fsdp-amax-group: at each gather
// (inline: hp_tensor_to_float8_dynamic with reduce_amax), or once per iteration for every weight
// after the optimizer step (precompute: precompute_float8_dynamic_scale_for_fsdp, modelled before
// the first iteration too). `world` reduces over every rank (torchao before pytorch/ao#933), so
// with pipeline stages the reduction waits for ranks that never reach it, or mixes their weights.
// The gathers of the recomputed forward (reshard after forward) are the same hook again; the
// gradient buckets stand for FSDP's reduce-scatter and stay on the "dp" communicator.
#include <fmt/format.h>

#include "protocols/generator.h"
#include "protocols/schedule.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

/// torchao's weight scale, fp8_max / amax in E4M3 (no margin, no history).
ScaleUpdateParams weight_scale_params() {
  ScaleUpdateParams params;
  params.tensors = 1;
  params.history_len = 1;
  params.algo = HistoryAlgo::most_recent;
  params.margin = 0;
  params.format = Fp8Format::e4m3;
  return params;
}

}  // namespace

void ProgramGenerator::fsdp_make_comms(Scenario& scenario) {
  if (knobs_.fsdp == FsdpMode::off) return;
  add_group_comms(scenario, layout_.partition({Dim::cp, Dim::dp}), "fsdp", fsdp_comm_of_);
  if (knobs_.fsdp_amax_group == FsdpAmaxGroup::world) {
    world_comm_ = static_cast<CommId>(scenario.comms.size());
    std::vector<RankId> all(layout_.world());
    for (RankId r = 0; r < layout_.world(); ++r) all[r] = r;
    scenario.comms.push_back(Communicator{"world", all});
  }
}

void ProgramGenerator::fsdp_setup_rank(RankState& rs) {
  if (knobs_.fsdp == FsdpMode::off) return;
  RankWriter& w = rs.writer;
  rs.fsdp_comm = fsdp_comm_of_[rs.id];
  rs.fsdp_members = knobs_.dp * knobs_.cp;  // every FSDP group spans DP x CP
  rs.fsdp_stream = w.stream("nccl:" + comm_names_[*rs.fsdp_comm]);
  rs.fsdp_amax_comm = world_comm_ ? world_comm_ : rs.fsdp_comm;
  rs.fsdp_amax_stream = world_comm_ ? w.stream("nccl:world") : rs.fsdp_stream;
  for (std::uint32_t m = 0; m < rs.module_count; ++m) {
    const std::string prefix = fmt::format("m{}.weight.", m);
    WeightBuffers wb;
    wb.shard = w.buffer(prefix + "shard", knobs_.elems);
    wb.fp8 = w.buffer(prefix + "fp8_shard", knobs_.elems);
    wb.amax = w.buffer(prefix + "amax", 1);
    wb.scale = w.buffer(prefix + "scale", 1, {1.0f});
    wb.scale_inv = w.buffer(prefix + "scale_inv", 1, {1.0f});
    wb.gathered = w.buffer(prefix + "fsdp_gathered", rs.fsdp_members * knobs_.elems + 1);
    rs.modules[m].weight = wb;
  }
  if (knobs_.fsdp == FsdpMode::precompute) rs.fsdp_amax = w.buffer("fsdp.weight_amax", rs.module_count);
}

void ProgramGenerator::fsdp_iteration_start(RankState& rs, std::uint32_t iter) {
  if (knobs_.fsdp == FsdpMode::off) return;
  RankWriter& w = rs.writer;
  const std::string where = fmt::format("iter {} / {}", iter, iter == 0 ? "initial weights" : "after the optimizer step");
  for (std::uint32_t m = 0; m < rs.module_count; ++m) {
    w.emit(rs.main, fill_op(rs.compute, w.whole(rs.modules[m].weight->shard), weight_shard_values(knobs_, rs.id, iter, m)),
           "fill_weight_shard", fmt::format("{} / module {} weight shard", where, m));
  }
  if (knobs_.fsdp != FsdpMode::precompute) return;
  const std::string precompute = where + " / precompute_float8_dynamic_scale_for_fsdp";
  for (std::uint32_t m = 0; m < rs.module_count; ++m) {
    w.emit(rs.main, local_amax_op(rs.compute, w.whole(rs.modules[m].weight->shard), Range{rs.fsdp_amax, m, 1}),
           "local_amax_weight", fmt::format("{} (module {})", precompute, m));
  }
  const Range amaxes = w.whole(rs.fsdp_amax);
  write_side_collective(rs, rs.main, rs.fsdp_amax_stream,
                        collective_op(OpKind::all_reduce, rs.fsdp_amax_stream, *rs.fsdp_amax_comm, ReduceOp::max, amaxes, amaxes),
                        "amax_weight", fmt::format("{}_weight", amax_reduction_name_prefix), precompute, true);
  for (std::uint32_t m = 0; m < rs.module_count; ++m) {
    const WeightBuffers& wb = *rs.modules[m].weight;
    w.emit(rs.main, scale_update_op(rs.compute, weight_scale_params(), Range{rs.fsdp_amax, m, 1}, w.whole(wb.scale), w.whole(wb.scale_inv)),
           "scale_update_weight", fmt::format("{} (module {}) scale from the reduced amax", precompute, m));
  }
}

void ProgramGenerator::fsdp_unshard(RankState& rs, ThreadId thread, std::uint32_t a, std::uint32_t m, const std::string& what) {
  if (!rs.modules[m].weight) return;
  const WeightBuffers& wb = *rs.modules[m].weight;
  RankWriter& w = rs.writer;
  const std::string where = origin(a, m, what + " FSDP pre-forward all-gather");
  if (knobs_.fsdp == FsdpMode::inline_amax) {
    w.emit(thread, local_amax_op(rs.compute, w.whole(wb.shard), w.whole(wb.amax)), "local_amax_weight", where);
    write_side_collective(rs, thread, rs.fsdp_amax_stream,
                          collective_op(OpKind::all_reduce, rs.fsdp_amax_stream, *rs.fsdp_amax_comm, ReduceOp::max, w.whole(wb.amax),
                                        w.whole(wb.amax)),
                          "amax_weight", fmt::format("{}_weight", amax_reduction_name_prefix), where + " (reduce_amax)", true);
    w.emit(thread, scale_update_op(rs.compute, weight_scale_params(), w.whole(wb.amax), w.whole(wb.scale), w.whole(wb.scale_inv)),
           "scale_update_weight", where + " scale from the reduced amax");
  }
  w.emit(thread, cast_op(rs.compute, w.whole(wb.shard), w.whole(wb.scale), w.whole(wb.fp8), Fp8Format::e4m3), "cast_weight", where);
  const std::uint32_t count = rs.fsdp_members * knobs_.elems;
  write_side_collective(rs, thread, rs.fsdp_stream,
                        collective_op(OpKind::all_gather, rs.fsdp_stream, *rs.fsdp_comm, ReduceOp::max, w.whole(wb.fp8),
                                      Range{wb.gathered, 0, count}),
                        "fsdp_gather", "fsdp_all_gather", where, true);
  // fsdp_post_all_gather: the gathered Float8Tensor takes this rank's scale.
  w.emit(thread, copy_op(rs.compute, w.whole(wb.scale_inv), Range{wb.gathered, count, 1}), "fsdp_gathered_scale_inv",
         where + " (fsdp_post_all_gather: this rank's scale)");
}

}  // namespace amaxcheck
