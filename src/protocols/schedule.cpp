#include "protocols/schedule.h"

#include <algorithm>
#include <cmath>

namespace amaxcheck {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// `elems` exact binary fractions of both signs with magnitudes in (2^-10, 32], from `state`.
std::vector<float> seeded_values(std::uint64_t state, std::uint32_t elems) {
  std::vector<float> values(elems);
  for (float& v : values) {
    const std::uint64_t bits = splitmix64(state);
    const float mantissa = static_cast<float>((bits & 1023u) + 1u) / 64.0f;  // (0, 16]
    const int exponent = static_cast<int>((bits >> 10) % 6u) - 4;           // 2^-4 .. 2^1
    v = ((bits >> 20) & 1u ? -1.0f : 1.0f) * std::ldexp(mantissa, exponent);
  }
  return values;
}

}  // namespace

std::uint32_t stage_module_count(const ProtocolKnobs& knobs, std::uint32_t stage) {
  return stage < knobs.stage_modules.size() ? knobs.stage_modules[stage] : knobs.modules;
}

std::uint32_t max_stage_modules(const ProtocolKnobs& knobs) {
  std::uint32_t most = knobs.stage_modules.empty() ? knobs.modules : 0;
  for (std::uint32_t n : knobs.stage_modules) most = std::max(most, n);
  return most;
}

std::vector<PipeStep> pipeline_order(const ProtocolKnobs& knobs, std::uint32_t stage) {
  const std::uint32_t m = knobs.microbatches;
  std::vector<PipeStep> order;
  if (knobs.pp_schedule == PpSchedule::gpipe) {
    for (std::uint32_t k = 0; k < m; ++k) order.push_back({true, k});
    for (std::uint32_t k = 0; k < m; ++k) order.push_back({false, k});
    return order;
  }
  // 1F1B, as Megatron-LM's forward_backward_pipelining_without_interleaving (also what an
  // unpipelined or independent stage runs: forward, backward, in turn).
  const std::uint32_t warmup = knobs.pp_schedule == PpSchedule::one_f_one_b ? std::min(knobs.pp - stage - 1, m) : 0;
  for (std::uint32_t k = 0; k < warmup; ++k) order.push_back({true, k});
  for (std::uint32_t i = 0; i < m - warmup; ++i) {
    order.push_back({true, warmup + i});
    order.push_back({false, i});
  }
  for (std::uint32_t k = m - warmup; k < m; ++k) order.push_back({false, k});
  return order;
}

bool module_runs(const ProtocolKnobs& knobs, RankId rank, std::uint32_t iter, std::uint32_t module) {
  for (const SkipRule& rule : knobs.skips) {
    if (rule.rank == rank && rule.module == module && (!rule.iter || *rule.iter == iter)) return false;
  }
  return true;
}

bool input_empty(const ProtocolKnobs& knobs, RankId rank, std::uint32_t iter, std::uint32_t module) {
  for (const SkipRule& rule : knobs.empties) {
    if (rule.rank == rank && rule.module == module && (!rule.iter || *rule.iter == iter)) return true;
  }
  return false;
}

bool module_trains(const ProtocolKnobs& knobs, std::uint32_t iter, std::uint32_t module) {
  for (const EvalRule& rule : knobs.evals) {
    if (rule.module == module && (!rule.iter || *rule.iter == iter)) return false;
  }
  return !module_eval_backward(knobs, iter, module);
}

bool module_eval_backward(const ProtocolKnobs& knobs, std::uint32_t iter, std::uint32_t module) {
  for (const EvalRule& rule : knobs.eval_backward) {
    if (rule.module == module && (!rule.iter || *rule.iter == iter)) return true;
  }
  return false;
}

bool module_frozen(const ProtocolKnobs& knobs, std::uint32_t iter, std::uint32_t module) {
  for (const EvalRule& rule : knobs.frozen) {
    if (rule.module == module && (!rule.iter || *rule.iter == iter)) return true;
  }
  return false;
}

std::uint32_t module_calls(const ProtocolKnobs& knobs, std::uint32_t iter, std::uint32_t module) {
  for (const EvalRule& rule : knobs.repeats) {
    if (rule.module == module && (!rule.iter || *rule.iter == iter)) return 2;
  }
  return 1;
}

std::vector<float> tensor_values(const ProtocolKnobs& knobs, RankId rank, std::uint32_t autocast,
                                 std::uint32_t module, Direction dir, std::uint32_t tensor, std::uint32_t call) {
  const std::uint32_t iter = iter_of(knobs, autocast);
  if (input_empty(knobs, rank, iter, module)) return {};
  // The last matching rule wins, like a later command-line option.
  for (auto it = knobs.inputs.rbegin(); it != knobs.inputs.rend(); ++it) {
    const InputRule& rule = *it;
    if (rule.rank != rank || rule.iter != iter || rule.module != module || rule.dir != dir) continue;
    if (rule.tensor && *rule.tensor != tensor) continue;
    if (rule.values.size() == 1) return std::vector<float>(knobs.elems, rule.values[0]);
    return rule.values;
  }
  std::uint64_t state = knobs.seed;
  for (std::uint64_t key : {std::uint64_t{rank}, std::uint64_t{autocast}, std::uint64_t{module},
                            std::uint64_t{dir == Direction::forward ? 0u : 1u}, std::uint64_t{tensor}}) {
    state ^= splitmix64(state) + key;
  }
  // A later call's key only when there is one, so the first call's values stay what they were.
  if (call > 0) state ^= splitmix64(state) + call;
  return seeded_values(state, knobs.elems);
}

std::vector<float> weight_shard_values(const ProtocolKnobs& knobs, RankId rank, std::uint32_t iter, std::uint32_t module) {
  std::uint64_t state = knobs.seed;
  // Direction key 2: no tensor of tensor_values has it.
  for (std::uint64_t key : {std::uint64_t{rank}, std::uint64_t{iter}, std::uint64_t{module}, std::uint64_t{2}}) {
    state ^= splitmix64(state) + key;
  }
  return seeded_values(state, knobs.elems);
}

}  // namespace amaxcheck
