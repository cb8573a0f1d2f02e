#include "protocols/reference_model.h"

#include <cmath>

#include "engine/fp8_math.h"
#include "protocols/layout.h"
#include "protocols/schedule.h"
#include "protocols/sharing.h"

namespace amaxcheck {
namespace {

constexpr Direction kDirections[] = {Direction::forward, Direction::backward};

/// Modules of `rank`'s pipeline stage.
std::uint32_t modules_of(const ProtocolKnobs& knobs, const Layout& layout, RankId rank) {
  return stage_module_count(knobs, layout.stage(rank));
}

/// The reduced amax of one tensor: max of the local amaxes of `peers` (the ranks sharing it
/// that quantize it in this autocast).
float reduced_amax(const ProtocolKnobs& knobs, const std::vector<RankId>& peers, std::uint32_t autocast,
                   std::uint32_t module, Direction dir, std::uint32_t tensor) {
  float amax = 0.0f;
  for (RankId peer : peers) {
    amax = std::fmax(amax, abs_max(tensor_values(knobs, peer, autocast, module, dir, tensor)));
  }
  return amax;
}

/// Ranks of a sharing group for which `quantizes(peer)` holds.
template <typename Pred>
std::vector<RankId> peers_of(const std::vector<RankId>& sharing, Pred quantizes) {
  std::vector<RankId> peers;
  for (RankId peer : sharing) {
    if (quantizes(peer)) peers.push_back(peer);
  }
  return peers;
}

void mark_undefined(ReferenceResult& result, const ProtocolKnobs& knobs, const std::vector<RankId>& group) {
  for (RankId r : group) {
    for (Direction dir : kDirections) {
      for (std::uint32_t m = 0; m < max_stage_modules(knobs); ++m) result.at(r, dir, m).defined = false;
    }
  }
}

/// Delayed scaling: each registration is copied into history row 0, then the update runs.
void run_delayed(const ProtocolKnobs& knobs, const Layout& layout, ReferenceResult& result) {
  const Groups reducing = layout.amax_groups();
  const Groups sharing = sharing_groups(layout, knobs.protocol);
  for (std::uint32_t a = 0; a < autocast_count(knobs); ++a) {
    const std::uint32_t iter = iter_of(knobs, a);
    for (const auto& group : reducing) {
      // Members whose global buffers differ in length cannot match their all-reduce.
      std::vector<std::uint32_t> counts;
      for (RankId r : group) {
        std::uint32_t count = 0;
        for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) count += module_registers(knobs, r, iter, m) ? 1 : 0;
        counts.push_back(count);
      }
      for (std::uint32_t count : counts) {
        if (group.size() > 1 && count != counts.front()) mark_undefined(result, knobs, group);
      }
    }
    for (const auto& group : sharing) {
      for (RankId r : group) {
        for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) {
          if (!module_registers(knobs, r, iter, m)) continue;
          const auto peers = peers_of(group, [&](RankId q) { return module_registers(knobs, q, iter, m); });
          for (Direction dir : kDirections) {
            ReferenceTensors& state = result.at(r, dir, m);
            const std::uint32_t tensors = tensor_count(knobs, dir);
            for (std::uint32_t t = 0; t < tensors; ++t) state.amax_history[t] = reduced_amax(knobs, peers, a, m, dir, t);
            const ScaleUpdateParams params{tensors, knobs.history, knobs.algo, knobs.margin, format_of(dir)};
            amax_and_scale_update(params, state.amax_history, state.scale, state.scale_inv);
          }
        }
      }
    }
  }
}

/// Current scaling: every quantization reduces one amax and recomputes that tensor's scale.
void run_current(const ProtocolKnobs& knobs, const Layout& layout, ReferenceResult& result) {
  const Groups reducing = layout.amax_groups();
  const Groups sharing = sharing_groups(layout, knobs.protocol);
  const auto quantize = [&](RankId r, const std::vector<RankId>& peers, std::uint32_t a, std::uint32_t m,
                            Direction dir) {
    ReferenceTensors& state = result.at(r, dir, m);
    for (std::uint32_t t = 0; t < tensor_count(knobs, dir); ++t) {
      const std::span<float> history(&state.amax_history[t], 1);
      history[0] = reduced_amax(knobs, peers, a, m, dir, t);
      const ScaleUpdateParams params{1, 1, HistoryAlgo::most_recent, knobs.margin, format_of(dir)};
      amax_and_scale_update(params, history, std::span<float>(&state.scale[t], 1),
                            std::span<float>(&state.scale_inv[t], 1));
    }
  };
  for (std::uint32_t a = 0; a < autocast_count(knobs); ++a) {
    const std::uint32_t iter = iter_of(knobs, a);
    for (const auto& group : reducing) {
      // Every quantization is one collective: members must quantize equally often.
      std::vector<std::uint32_t> counts;
      for (RankId r : group) {
        std::uint32_t count = 0;
        for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) {
          if (module_runs(knobs, r, iter, m)) count += knobs.fwd_tensors;
          if (module_registers(knobs, r, iter, m)) {
            count += knobs.bwd_tensors + (knobs.recompute ? knobs.fwd_tensors : 0);
          }
        }
        counts.push_back(count);
      }
      for (std::uint32_t count : counts) {
        if (group.size() > 1 && count != counts.front()) mark_undefined(result, knobs, group);
      }
    }
    for (const auto& group : sharing) {
      for (RankId r : group) {
        for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) {
          if (!module_runs(knobs, r, iter, m)) continue;
          quantize(r, peers_of(group, [&](RankId q) { return module_runs(knobs, q, iter, m); }), a, m,
                   Direction::forward);
        }
        for (std::uint32_t mm = modules_of(knobs, layout, r); mm-- > 0;) {
          if (!module_registers(knobs, r, iter, mm)) continue;
          const auto peers = peers_of(group, [&](RankId q) { return module_registers(knobs, q, iter, mm); });
          if (knobs.recompute) quantize(r, peers, a, mm, Direction::forward);
          quantize(r, peers, a, mm, Direction::backward);
        }
      }
    }
  }
}

}  // namespace

ReferenceResult::ReferenceResult(std::uint32_t ranks, std::uint32_t modules)
    : modules_(modules), tensors_(static_cast<std::size_t>(ranks) * 2 * modules) {}

ReferenceTensors& ReferenceResult::at(RankId rank, Direction dir, std::uint32_t module) {
  return tensors_[(static_cast<std::size_t>(rank) * 2 + (dir == Direction::forward ? 0 : 1)) * modules_ + module];
}

const ReferenceTensors& ReferenceResult::at(RankId rank, Direction dir, std::uint32_t module) const {
  return const_cast<ReferenceResult*>(this)->at(rank, dir, module);
}

std::uint32_t history_length(const ProtocolKnobs& knobs) {
  return knobs.protocol == ProtocolName::current_scaling ? 1 : knobs.history;
}

ReferenceResult run_reference_model(const ProtocolKnobs& knobs) {
  const Layout layout(knobs);
  ReferenceResult result(layout.world(), max_stage_modules(knobs));
  const std::uint32_t history = history_length(knobs);
  for (RankId r = 0; r < layout.world(); ++r) {
    for (Direction dir : kDirections) {
      for (std::uint32_t m = 0; m < max_stage_modules(knobs); ++m) {
        ReferenceTensors& state = result.at(r, dir, m);
        const std::uint32_t tensors = tensor_count(knobs, dir);
        state.amax_history.assign(static_cast<std::size_t>(history) * tensors, 0.0f);
        state.scale.assign(tensors, 1.0f);
        state.scale_inv.assign(tensors, 1.0f);
      }
    }
  }
  if (knobs.protocol == ProtocolName::current_scaling) {
    run_current(knobs, layout, result);
  } else {
    run_delayed(knobs, layout, result);
  }
  return result;
}

}  // namespace amaxcheck
