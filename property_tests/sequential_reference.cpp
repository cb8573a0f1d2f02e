// The independent reference: plain loops over ranks, autocasts and tensors, nothing shared
// with the engine's arithmetic. See sequential_reference.h for the semantics.
#include "sequential_reference.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "protocols/schedule.h"

namespace amaxcheck::props {
namespace {

struct Coords {
  std::uint32_t tp = 0, dp = 0, pp = 0;
};

Coords coords_of(const ProtocolKnobs& k, RankId rank) {
  return Coords{rank % k.tp, (rank / k.tp) % k.dp, rank / (k.tp * k.dp)};
}

bool runs(const ProtocolKnobs& k, RankId rank, std::uint32_t iter, std::uint32_t module) {
  for (const SkipRule& s : k.skips) {
    if (s.rank == rank && s.module == module && (!s.iter || *s.iter == iter)) return false;
  }
  return true;
}

bool trains(const ProtocolKnobs& k, std::uint32_t iter, std::uint32_t module) {
  for (const EvalRule& e : k.evals) {
    if (e.module == module && (!e.iter || *e.iter == iter)) return false;
  }
  return true;
}

bool frozen(const ProtocolKnobs& k, std::uint32_t iter, std::uint32_t module) {
  for (const EvalRule& f : k.frozen) {
    if (f.module == module && (!f.iter || *f.iter == iter)) return true;
  }
  return false;
}

float the_max(float a, float b) { return std::fmax(a, b); }  // NaN-ignoring, like fmaxf

/// A module called twice (--repeat) quantizes two sets of inputs; its one amax is over both.
std::uint32_t calls(const ProtocolKnobs& k, std::uint32_t iter, std::uint32_t module) {
  for (const EvalRule& rule : k.repeats) {
    if (rule.module == module && (!rule.iter || *rule.iter == iter)) return 2;
  }
  return 1;
}

float reduced_amax(const ProtocolKnobs& k, const std::vector<RankId>& peers, std::uint32_t autocast,
                   std::uint32_t module, Direction dir, std::uint32_t tensor) {
  float amax = 0.0f;
  for (RankId peer : peers) {
    for (std::uint32_t call = 0; call < calls(k, autocast / k.microbatches, module); ++call) {
      amax = the_max(amax, local_amax(tensor_values(k, peer, autocast, module, dir, tensor, call)));
    }
  }
  return amax;
}

Fp8Format format_for(std::uint32_t dir) { return dir == 0 ? Fp8Format::e4m3 : Fp8Format::e5m2; }

}  // namespace

float local_amax(std::span<const float> values) {
  float amax = 0.0f;
  for (float v : values) {
    if (!std::isnan(v) && std::fabs(v) > amax) amax = std::fabs(v);
  }
  return amax;
}

void scale_update(std::vector<float>& history, std::vector<float>& scale, std::vector<float>& scale_inv,
                  std::uint32_t tensors, std::uint32_t history_len, HistoryAlgo algo, int margin,
                  Fp8Format format) {
  const float fp8_max = format == Fp8Format::e4m3 ? 448.0f : 57344.0f;
  for (std::uint32_t t = 0; t < tensors; ++t) {
    float amax = history[t];
    if (algo == HistoryAlgo::max) {
      for (std::uint32_t row = 1; row < history_len; ++row) {
        const float v = history[row * tensors + t];
        if (std::isnan(v) || std::isnan(amax)) {
          amax = NAN;  // torch.max propagates NaN
        } else if (v > amax) {
          amax = v;
        }
      }
    }
    if (std::isfinite(amax) && amax > 0.0f) {
      float s = (fp8_max / amax) / std::ldexp(1.0f, margin);
      if (std::isinf(s)) s = FLT_MAX;
      scale[t] = s;
    }
    scale_inv[t] = 1.0f / scale[t];
  }
  // torch.roll(h, -1, 0): new row r = old row r+1 (wrapping), then row 0 = 0.
  const std::vector<float> old = history;
  for (std::uint32_t row = 0; row < history_len; ++row) {
    for (std::uint32_t t = 0; t < tensors; ++t) {
      history[row * tensors + t] = old[((row + 1) % history_len) * tensors + t];
    }
  }
  for (std::uint32_t t = 0; t < tensors; ++t) history[t] = 0.0f;
}

std::vector<RankId> amax_group(const ProtocolKnobs& k, RankId rank) {
  GroupKind kind = k.group;
  if (kind == GroupKind::automatic) kind = k.protocol == ProtocolName::current_scaling ? GroupKind::tp : GroupKind::tp_dp;
  const Coords me = coords_of(k, rank);
  std::vector<RankId> group;
  const RankId world = k.dp * k.tp * k.pp;
  for (RankId r = 0; r < world; ++r) {
    const Coords c = coords_of(k, r);
    bool same = false;
    switch (kind) {
      case GroupKind::dp: same = c.tp == me.tp && c.pp == me.pp; break;
      case GroupKind::tp: same = c.dp == me.dp && c.pp == me.pp; break;
      case GroupKind::tp_dp: same = c.pp == me.pp; break;
      case GroupKind::world: same = true; break;
      case GroupKind::automatic:
      case GroupKind::explicit_lists:
        for (const auto& list : k.explicit_groups) {
          bool has_me = false, has_r = false;
          for (RankId x : list) {
            has_me |= x == rank;
            has_r |= x == r;
          }
          same |= has_me && has_r;
        }
        break;
    }
    if (same) group.push_back(r);
  }
  return group;
}

std::vector<RankId> replica_group(const ProtocolKnobs& k, RankId rank) {
  const Coords me = coords_of(k, rank);
  const bool current = k.protocol == ProtocolName::current_scaling;
  std::vector<RankId> group;
  for (RankId r = 0; r < k.dp * k.tp * k.pp; ++r) {
    const Coords c = coords_of(k, r);
    if (c.pp == me.pp && (!current || c.dp == me.dp)) group.push_back(r);
  }
  return group;
}

namespace {

/// The forward (true) and backward (false) passes of one iteration on a pipeline stage, by
/// microbatch, in the order the stage runs them: 1F1B (pp - stage - 1 warm-up forwards, then a
/// forward and a backward in turn, then the rest of the backwards), GPipe (all forwards, then all
/// backwards); without a pipeline, forward and backward in turn. Written here from the
/// schedules' definitions, not taken from the generator.
std::vector<std::pair<bool, std::uint32_t>> stage_passes(const ProtocolKnobs& k, std::uint32_t stage) {
  std::vector<std::pair<bool, std::uint32_t>> passes;
  const std::uint32_t m = k.microbatches;
  const bool pipelined = k.pp > 1 && k.pp_schedule != PpSchedule::independent;
  std::uint32_t warmup = 0;
  if (pipelined && k.pp_schedule == PpSchedule::gpipe) warmup = m;
  if (pipelined && k.pp_schedule == PpSchedule::one_f_one_b) warmup = std::min(k.pp - 1 - stage, m);
  std::uint32_t next_forward = 0, next_backward = 0;
  while (next_forward < warmup) passes.emplace_back(true, next_forward++);
  while (next_backward < m) {
    if (next_forward < m) passes.emplace_back(true, next_forward++);
    passes.emplace_back(false, next_backward++);
  }
  return passes;
}

}  // namespace

UpdateLog expected_updates(const ProtocolKnobs& k) {
  UpdateLog log;
  const RankId world = k.dp * k.tp * k.pp;
  const bool current = k.protocol == ProtocolName::current_scaling;
  const std::uint32_t autocasts = k.iters * k.microbatches;
  for (RankId r = 0; r < world; ++r) {
    const std::vector<RankId> group = replica_group(k, r);
    for (std::uint32_t m = 0; m < k.modules; ++m) {
      for (std::uint32_t dir = 0; dir < 2; ++dir) {
        const std::uint32_t tensors = dir == 0 ? k.fwd_tensors : k.bwd_tensors;
        const std::uint32_t history_len = current ? 1 : k.history;
        const HistoryAlgo algo = current ? HistoryAlgo::most_recent : k.algo;
        // One state per tensor for current scaling, one for the whole module otherwise.
        const std::uint32_t states = current ? tensors : 1;
        const std::uint32_t width = current ? 1 : tensors;
        for (std::uint32_t s = 0; s < states; ++s) {
          std::vector<float> history(history_len * width, 0.0f), scale(width, 1.0f), scale_inv(width, 1.0f);
          auto& records = log[UpdateKey{r, m, dir, s}];
          auto update = [&](std::uint32_t autocast, const std::vector<RankId>& peers) {
            for (std::uint32_t t = 0; t < width; ++t) {
              history[t] = reduced_amax(k, peers, autocast, m, dir == 0 ? Direction::forward : Direction::backward,
                                        current ? s : t);
            }
            UpdateRecord rec;
            rec.autocast = autocast;
            rec.consumed = history;
            scale_update(history, scale, scale_inv, width, history_len, algo, k.margin, format_for(dir));
            rec.history = history;
            rec.scale = scale;
            rec.scale_inv = scale_inv;
            records.push_back(std::move(rec));
          };
          // Per direction, a module's updates follow the autocasts, except current scaling's
          // forward state, which the recomputation in backward updates too: those follow the
          // stage's schedule (under 1F1B a later forward can come before an earlier backward).
          for (std::uint32_t iter = 0; iter < autocasts / k.microbatches; ++iter) {
            for (const auto& [forward, microbatch] : stage_passes(k, coords_of(k, r).pp)) {
              const std::uint32_t a = iter * k.microbatches + microbatch;
              const bool module_runs = runs(k, r, iter, m);
              const bool registers = module_runs && trains(k, iter, m);
              const bool backward_runs = registers && !frozen(k, iter, m);  // a frozen module has no backward
              if (!current) {
                // Delayed scaling reduces over the peers that registered; with static slots and
                // --unrun update, a module that did not register is updated too (from their max,
                // 0 when none did), once it has slots: from its first forward on the rank on.
                if (forward != (dir == 0)) continue;
                std::vector<RankId> peers;
                for (RankId q : group) {
                  const bool q_registers = runs(k, q, iter, m) && trains(k, iter, m) && (dir == 0 || !frozen(k, iter, m));
                  if (q_registers) peers.push_back(q);
                }
                const bool updates_unrun = k.registration == Registration::static_slots && k.unrun == UnrunUpdate::update;
                bool has_slots = false;
                for (std::uint32_t i = 0; i <= iter; ++i) has_slots = has_slots || runs(k, r, i, m);
                if (dir == 0 ? registers : backward_runs) {
                  update(a, peers);
                } else if (updates_unrun && has_slots) {
                  update(a, peers);
                }
              } else if (dir == 0) {
                if (forward && module_runs) update(a, group);                    // forward (evaluation mode too)
                if (!forward && backward_runs && k.recompute) update(a, group);  // recomputed in backward
              } else if (!forward && backward_runs) {
                update(a, group);
              }
            }
          }
        }
      }
    }
  }
  return log;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace amaxcheck::props
