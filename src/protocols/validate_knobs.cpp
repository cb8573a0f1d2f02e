// validate_knobs: the checks that need several knobs at once. Single values are checked when
// they are parsed (knobs.cpp); here we check them against each other.
#include <fmt/format.h>

#include <algorithm>

#include "protocols/knob_values.h"
#include "protocols/layout.h"
#include "protocols/protocol.h"
#include "protocols/protocol_size.h"
#include "protocols/schedule.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

/// A cap on generated ops, so a typo (--iters 1000 --modules 256 at 4096 ranks) is an input
/// error rather than minutes of generation and gigabytes of memory.
constexpr std::uint64_t kMaxOps = 20'000'000;

[[noreturn]] void reject(const std::string& knob, const std::string& what) {
  throw InputError(fmt::format("--{}: {}", knob, what));
}

void check_module(std::uint32_t module, const ProtocolKnobs& k, const std::string& knob, const std::string& rule) {
  const std::uint32_t most = max_stage_modules(k);
  if (module >= most) {
    reject(knob, fmt::format("module {} out of range in \"{}\" ({} {})", module, rule,
                             k.stage_modules.empty() ? "--modules" : "the largest stage of --stage-modules has", most));
  }
}

/// A rule naming a rank's module: the module must exist in that rank's stage.
void check_rank_module(RankId rank, std::uint32_t module, const ProtocolKnobs& k, const std::string& knob,
                       const std::string& rule) {
  check_module(module, k, knob, rule);
  const std::uint32_t stage = Layout(k).stage(rank);
  if (module >= stage_module_count(k, stage)) {
    reject(knob, fmt::format("module {} out of range in \"{}\" (rank {} is in stage {}, which has {} modules)", module,
                             rule, rank, stage, stage_module_count(k, stage)));
  }
}

void check_iter(std::uint32_t iter, const ProtocolKnobs& k, const std::string& knob, const std::string& rule) {
  if (iter >= k.iters) reject(knob, fmt::format("iteration {} out of range in \"{}\" (--iters {})", iter, rule, k.iters));
}

void check_rank(RankId rank, std::uint64_t world, const std::string& knob, const std::string& rule) {
  if (rank >= world) reject(knob, fmt::format("rank {} out of range in \"{}\" (world size {})", rank, rule, world));
}

void check_explicit_groups(const ProtocolKnobs& k, std::uint64_t world) {
  std::vector<int> seen(world, -1);
  for (std::size_t g = 0; g < k.explicit_groups.size(); ++g) {
    if (k.explicit_groups[g].empty()) reject("group", fmt::format("rank list {} is empty", g));
    for (RankId r : k.explicit_groups[g]) {
      if (r >= world) reject("group", fmt::format("rank {} out of range (world size {})", r, world));
      if (seen[r] == static_cast<int>(g)) reject("group", fmt::format("rank {} appears twice in rank list {}", r, g));
      if (seen[r] >= 0) reject("group", fmt::format("rank {} is in rank lists {} and {}; lists must not overlap", r, seen[r], g));
      seen[r] = static_cast<int>(g);
    }
  }
  for (RankId r = 0; r < world; ++r) {
    if (seen[r] < 0) reject("group", fmt::format("rank {} is in no rank list; the lists must cover every rank", r));
  }
}

}  // namespace

void validate_knobs(const ProtocolKnobs& k) {
  const std::uint64_t world = std::uint64_t{k.dp} * k.tp * k.pp * k.cp;
  if (world > kMaxWorld) {
    reject("dp", fmt::format("world size dp*tp*pp*cp = {} exceeds {}", world, kMaxWorld));
  }
  for (const SkipRule& rule : k.skips) {
    check_rank(rule.rank, world, "skip", knobs::show(rule));
    check_rank_module(rule.rank, rule.module, k, "skip", knobs::show(rule));
    if (rule.iter) check_iter(*rule.iter, k, "skip", knobs::show(rule));
  }
  for (const SkipRule& rule : k.empties) {
    check_rank(rule.rank, world, "empty", knobs::show(rule));
    check_rank_module(rule.rank, rule.module, k, "empty", knobs::show(rule));
    if (rule.iter) check_iter(*rule.iter, k, "empty", knobs::show(rule));
  }
  for (const EvalRule& rule : k.evals) {
    check_module(rule.module, k, "eval", knobs::show(rule));
    if (rule.iter) check_iter(*rule.iter, k, "eval", knobs::show(rule));
  }
  for (const EvalRule& rule : k.frozen) {
    check_module(rule.module, k, "frozen", knobs::show(rule));
    if (rule.iter) check_iter(*rule.iter, k, "frozen", knobs::show(rule));
  }
  for (const EvalRule& rule : k.eval_backward) {
    check_module(rule.module, k, "eval-backward", knobs::show(rule));
    if (rule.iter) check_iter(*rule.iter, k, "eval-backward", knobs::show(rule));
  }
  for (const EvalRule& rule : k.repeats) {
    check_module(rule.module, k, "repeat", knobs::show(rule));
    if (rule.iter) check_iter(*rule.iter, k, "repeat", knobs::show(rule));
  }
  if (!k.repeats.empty() && k.protocol == ProtocolName::current_scaling) {
    reject("repeat", "models delayed scaling's amax slots (te-sync, te-async); current scaling has none");
  }
  if (k.reduce_at_bwd != BwdReducePoint::automatic && k.protocol == ProtocolName::current_scaling) {
    reject("reduce-at-bwd", "places delayed scaling's backward reduction (te-sync, te-async); current scaling reduces "
                            "every quantization inline");
  }
  if (k.slots == SlotKey::positional && k.registration == Registration::static_slots) {
    reject("slots", "positional slots are dynamic registration's (static registration gives every module slot m: keyed)");
  }
  if (k.recompute_amax == RecomputeAmax::register_again) {
    if (!k.recompute) reject("recompute-amax", "register needs --recompute");
    if (k.protocol == ProtocolName::current_scaling) {
      reject("recompute-amax", "is delayed scaling's (current scaling reduces every recomputed quantization anyway)");
    }
    if (k.registration == Registration::static_slots || k.slots == SlotKey::positional) {
      reject("recompute-amax", "register models dynamic registration with keyed slots (the recompute's own buffer)");
    }
  }
  if (k.sp_amax != SpAmax::reduce && k.sp_gather == SpGather::off) reject("sp-amax", "needs --sp-gather fp8");
  if (k.sp_gather == SpGather::fp8) {
    if (k.tp < 2) reject("sp-gather", "fp8 gathers sequence shards over the TP group: it needs --tp > 1");
    // Sequence shards are equal-sized and every TP peer runs every layer: a module missing or
    // empty on one peer has no counterpart to gather with (NCCL's all-gather takes equal counts).
    if (!k.skips.empty()) reject("sp-gather", "with --skip: every TP peer runs every sequence-parallel layer");
    if (!k.empties.empty()) reject("sp-gather", "with --empty: sequence shards are equal-sized (Megatron-LM pads the sequence)");
  }
  if (k.fsdp_amax_group != FsdpAmaxGroup::shard && k.fsdp == FsdpMode::off) reject("fsdp-amax-group", "needs --fsdp");
  if (k.fsdp != FsdpMode::off) {
    if (k.protocol != ProtocolName::current_scaling) {
      reject("fsdp", "models torchao float8's dynamic (current) scaling of sharded weights: use current-scaling");
    }
    if (std::uint64_t{k.dp} * k.cp < 2) reject("fsdp", "shards weights over the DP x CP group: it needs --dp * --cp > 1");
  }
  for (const InputRule& rule : k.inputs) {
    const std::string text = knobs::show(rule);
    check_rank(rule.rank, world, "input", text);
    check_iter(rule.iter, k, "input", text);
    check_rank_module(rule.rank, rule.module, k, "input", text);
    if (rule.tensor && *rule.tensor >= tensor_count(k, rule.dir)) {
      reject("input", fmt::format("tensor {} out of range in \"{}\" ({} tensors per module)", *rule.tensor, text,
                                  tensor_count(k, rule.dir)));
    }
    if (rule.values.size() != 1 && rule.values.size() != k.elems) {
      reject("input", fmt::format("expected 1 or {} (--elems) values in \"{}\", got {}", k.elems, text, rule.values.size()));
    }
  }
  if (k.group == GroupKind::explicit_lists) check_explicit_groups(k, world);
  if (!k.stage_modules.empty() && k.stage_modules.size() != k.pp) {
    reject("stage-modules", fmt::format("expected one module count per pipeline stage (--pp {}), got {}", k.pp,
                                        k.stage_modules.size()));
  }

  const std::uint64_t ops = estimated_ops(k);
  if (ops > kMaxOps) {
    reject("iters", fmt::format("the scenario would have about {} ops (limit {}); use fewer ranks, modules, "
                                "microbatches or iterations", ops, kMaxOps));
  }

  if (k.comm == CommChoice::shared) {
    const Layout layout(k);
    const Groups grad = layout.grad_groups();
    for (const auto& group : layout.amax_groups()) {
      if (group.size() < 2) continue;
      if (std::find(grad.begin(), grad.end(), group) == grad.end()) {
        std::string ranks;
        for (RankId r : group) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
        reject("comm", fmt::format("shared needs each amax reduction group to be a data-parallel (DP x CP) group, "
                                   "but group {{{}}} is not; use --comm separate or --group dp", ranks));
      }
    }
  }
}

}  // namespace amaxcheck
