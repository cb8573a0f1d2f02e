#include "protocols/reference_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

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
/// that quantize it in this autocast), over every call of the module (--repeat: one amax per
/// module and autocast, however often it is called).
float reduced_amax(const ProtocolKnobs& knobs, const std::vector<RankId>& peers, std::uint32_t autocast,
                   std::uint32_t module, Direction dir, std::uint32_t tensor) {
  float amax = 0.0f;
  const std::uint32_t calls = module_calls(knobs, iter_of(knobs, autocast), module);
  for (RankId peer : peers) {
    for (std::uint32_t call = 0; call < calls; ++call) {
      amax = std::fmax(amax, abs_max(tensor_values(knobs, peer, autocast, module, dir, tensor, call)));
    }
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

/// Reduced amaxes of one sharing group, one entry per (module, direction, tensor), computed on
/// first use: every member that quantizes a module reads the same peers' values, so computing
/// them per member made the model O(group^2) in the values it generated.
class GroupAmaxes {
 public:
  GroupAmaxes(const ProtocolKnobs& knobs, std::uint32_t autocast, std::uint32_t modules)
      : knobs_(knobs), autocast_(autocast), slots_(static_cast<std::size_t>(modules) * 2) {}

  /// The reduced amaxes of `module`'s tensors in `dir` over `peers` (the same peers on every
  /// call for one module and direction: the caller's predicate depends on the module only).
  const std::vector<float>& get(const std::vector<RankId>& peers, std::uint32_t module, Direction dir) {
    std::optional<std::vector<float>>& slot = slots_[module * 2 + (dir == Direction::forward ? 0 : 1)];
    if (!slot) {
      slot.emplace(tensor_count(knobs_, dir));
      for (std::uint32_t t = 0; t < slot->size(); ++t) (*slot)[t] = reduced_amax(knobs_, peers, autocast_, module, dir, t);
    }
    return *slot;
  }

 private:
  const ProtocolKnobs& knobs_;
  std::uint32_t autocast_;
  std::vector<std::optional<std::vector<float>>> slots_;  // [module][dir]
};

/// The members of a configured reduction group register different numbers of tensors: their
/// reductions cannot match.
bool counts_differ(const std::vector<std::uint32_t>& counts) {
  return std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) != counts.end();
}

/// --sp-gather fp8: records tensor 0's cast of `module` in `dir` on `rank` in `autocast` with the
/// scale the rank's state holds now (call `call` of a repeated module: the last to cast).
void record_cast(const ProtocolKnobs& knobs, ReferenceResult& result, RankId rank, std::uint32_t autocast,
                 std::uint32_t module, Direction dir, std::uint32_t call) {
  if (knobs.sp_gather != SpGather::fp8) return;
  const ReferenceTensors& state = result.at(rank, dir, module);
  ReferenceCast& cast = result.cast(rank, dir, module);
  cast.values = tensor_values(knobs, rank, autocast, module, dir, 0, call);
  for (float& v : cast.values) v = round_to_fp8(v * state.scale[0], format_of(dir));
  cast.scale_inv = state.scale_inv[0];
}

/// Delayed scaling: the casts of autocast `a` use the scales the earlier autocasts left (each
/// module's prepare step consumes its previous registration before it casts).
void record_delayed_casts(const ProtocolKnobs& knobs, const Layout& layout, ReferenceResult& result, std::uint32_t a) {
  if (knobs.sp_gather != SpGather::fp8) return;
  const std::uint32_t iter = iter_of(knobs, a);
  for (RankId r = 0; r < layout.world(); ++r) {
    for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) {
      const std::uint32_t calls = module_calls(knobs, iter, m);
      // Forward: every call casts, the last one last; backward: autograd runs call 0's last.
      if (module_runs(knobs, r, iter, m)) record_cast(knobs, result, r, a, m, Direction::forward, calls - 1);
      if (module_backprops(knobs, r, iter, m)) record_cast(knobs, result, r, a, m, Direction::backward, 0);
    }
  }
}

bool contains(const std::vector<std::uint32_t>& modules, std::uint32_t m) {
  return std::find(modules.begin(), modules.end(), m) != modules.end();
}

/// Delayed scaling: each registration is copied into history row 0, then the update runs.
void run_delayed(const ProtocolKnobs& knobs, const Layout& layout, ReferenceResult& result) {
  const bool static_slots = knobs.registration == Registration::static_slots;
  const bool update_unrun = static_slots && knobs.unrun == UnrunUpdate::update;
  const Groups reducing = layout.amax_groups();
  const Groups sharing = sharing_groups(layout, knobs.protocol);
  // Static slots: each rank's modules in the order of their first forward (TE v1.6+ appends a
  // module's slots to the global buffers then), the layout of every later buffer of the rank.
  std::vector<std::vector<std::uint32_t>> first_run(static_slots ? layout.world() : 0);
  for (std::uint32_t a = 0; a < autocast_count(knobs); ++a) {
    const std::uint32_t iter = iter_of(knobs, a);
    record_delayed_casts(knobs, layout, result, a);
    for (RankId r = 0; r < first_run.size(); ++r) {
      for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) {
        if (module_runs(knobs, r, iter, m) && !contains(first_run[r], m)) first_run[r].push_back(m);
      }
    }
    for (const auto& group : reducing) {
      // Members whose global buffers (forward or backward) differ in length cannot match their
      // all-reduce.
      for (Direction dir : kDirections) {
        std::vector<std::uint32_t> counts;
        for (RankId r : group) {
          std::uint32_t count = 0;
          for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) {
            // Positional slots: one per call (--repeat); keyed: one per module.
            const std::uint32_t per_call = knobs.slots == SlotKey::positional ? module_calls(knobs, iter, m) : 1;
            count += module_registers_in(knobs, dir, r, iter, m) ? per_call : 0;
          }
          counts.push_back(static_slots ? static_cast<std::uint32_t>(first_run[r].size()) : count);
        }
        if (group.size() > 1 && counts_differ(counts)) mark_undefined(result, knobs, group);
      }
      // Static slots of equal count laid out in different orders: TE reduces slot i of one rank
      // with slot i of another, a different module, and each rank copies back its own slot's
      // mix. What each replica ends with depends on that mix, not on the tensor: no expected
      // value is claimed for the group (the replicas diverge instead).
      if (static_slots && group.size() > 1) {
        for (RankId r : group) {
          if (first_run[r] != first_run[group.front()]) mark_undefined(result, knobs, group);
        }
      }
    }
    for (const auto& group : sharing) {
      GroupAmaxes amaxes(knobs, a, max_stage_modules(knobs));
      for (Direction dir : kDirections) {
        std::vector<std::optional<std::vector<RankId>>> peers(max_stage_modules(knobs));
        for (RankId r : group) {
          for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) {
            // Static slots with --unrun update: a module that did not register is updated too,
            // from the max over the peers that did (0 when none did), once it has slots (it ran).
            if (!module_registers_in(knobs, dir, r, iter, m) && !(update_unrun && contains(first_run[r], m))) continue;
            if (!peers[m]) peers[m] = peers_of(group, [&](RankId q) { return module_registers_in(knobs, dir, q, iter, m); });
            ReferenceTensors& state = result.at(r, dir, m);
            const std::uint32_t tensors = tensor_count(knobs, dir);
            const std::vector<float>& reduced = amaxes.get(*peers[m], m, dir);
            std::copy(reduced.begin(), reduced.end(), state.amax_history.begin());
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
  std::uint32_t a = 0;
  const auto quantize = [&](RankId r, const std::vector<float>& reduced, Direction dir, std::uint32_t m) {
    ReferenceTensors& state = result.at(r, dir, m);
    for (std::uint32_t t = 0; t < tensor_count(knobs, dir); ++t) {
      const std::span<float> history(&state.amax_history[t], 1);
      history[0] = reduced[t];
      const ScaleUpdateParams params{1, 1, HistoryAlgo::most_recent, knobs.margin, format_of(dir)};
      amax_and_scale_update(params, history, std::span<float>(&state.scale[t], 1),
                            std::span<float>(&state.scale_inv[t], 1));
    }
    record_cast(knobs, result, r, a, m, dir, 0);
  };
  for (; a < autocast_count(knobs); ++a) {
    const std::uint32_t iter = iter_of(knobs, a);
    for (const auto& group : reducing) {
      // Every quantization is one collective: members must quantize equally often.
      std::vector<std::uint32_t> counts;
      for (RankId r : group) {
        std::uint32_t count = 0;
        for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) {
          if (module_runs(knobs, r, iter, m)) count += knobs.fwd_tensors;
          if (module_backprops(knobs, r, iter, m)) {
            count += knobs.bwd_tensors + (knobs.recompute ? knobs.fwd_tensors : 0);
          }
        }
        counts.push_back(count);
      }
      if (group.size() > 1 && counts_differ(counts)) mark_undefined(result, knobs, group);
    }
    for (const auto& group : sharing) {
      // The forward pass reduces over the peers that run a module, recomputation and the
      // backward pass over those that run its backward: two caches.
      const std::uint32_t modules = max_stage_modules(knobs);
      GroupAmaxes running(knobs, a, modules);
      GroupAmaxes registering(knobs, a, modules);
      std::vector<std::optional<std::vector<RankId>>> runs(modules);
      std::vector<std::optional<std::vector<RankId>>> registers(modules);
      for (RankId r : group) {
        for (std::uint32_t m = 0; m < modules_of(knobs, layout, r); ++m) {
          if (!module_runs(knobs, r, iter, m)) continue;
          if (!runs[m]) runs[m] = peers_of(group, [&](RankId q) { return module_runs(knobs, q, iter, m); });
          quantize(r, running.get(*runs[m], m, Direction::forward), Direction::forward, m);
        }
        for (std::uint32_t mm = modules_of(knobs, layout, r); mm-- > 0;) {
          if (!module_backprops(knobs, r, iter, mm)) continue;
          if (!registers[mm]) {
            registers[mm] = peers_of(group, [&](RankId q) { return module_backprops(knobs, q, iter, mm); });
          }
          if (knobs.recompute) quantize(r, registering.get(*registers[mm], mm, Direction::forward), Direction::forward, mm);
          quantize(r, registering.get(*registers[mm], mm, Direction::backward), Direction::backward, mm);
        }
      }
    }
  }
}

/// --fsdp: every iteration's weight scales from the FSDP group's shards.
void run_fsdp(const ProtocolKnobs& knobs, const Layout& layout, ReferenceResult& result) {
  const Groups groups = layout.partition({Dim::cp, Dim::dp});
  const ScaleUpdateParams params{1, 1, HistoryAlgo::most_recent, 0, Fp8Format::e4m3};
  for (std::uint32_t iter = 0; iter < knobs.iters; ++iter) {
    for (const auto& group : groups) {
      for (std::uint32_t m = 0; m < modules_of(knobs, layout, group.front()); ++m) {
        float amax = 0.0f;
        for (RankId r : group) amax = std::fmax(amax, abs_max(weight_shard_values(knobs, r, iter, m)));
        for (RankId r : group) {
          ReferenceWeight& w = result.weight(r, m);
          float history = amax;
          amax_and_scale_update(params, std::span<float>(&history, 1), std::span<float>(&w.scale, 1),
                                std::span<float>(&w.scale_inv, 1));
          w.shard_fp8 = weight_shard_values(knobs, r, iter, m);
          for (float& v : w.shard_fp8) v = round_to_fp8(v * w.scale, Fp8Format::e4m3);
        }
      }
    }
  }
}

}  // namespace

ReferenceResult::ReferenceResult(std::uint32_t ranks, std::uint32_t modules, bool casts, bool weights)
    : modules_(modules),
      tensors_(static_cast<std::size_t>(ranks) * 2 * modules),
      casts_(casts ? tensors_.size() : 0),
      weights_(weights ? static_cast<std::size_t>(ranks) * modules : 0) {}

ReferenceTensors& ReferenceResult::at(RankId rank, Direction dir, std::uint32_t module) { return tensors_[index(rank, dir, module)]; }

const ReferenceTensors& ReferenceResult::at(RankId rank, Direction dir, std::uint32_t module) const {
  return const_cast<ReferenceResult*>(this)->at(rank, dir, module);
}

std::uint32_t history_length(const ProtocolKnobs& knobs) {
  return knobs.protocol == ProtocolName::current_scaling ? 1 : knobs.history;
}

ReferenceResult run_reference_model(const ProtocolKnobs& knobs) {
  const Layout layout(knobs);
  ReferenceResult result(layout.world(), max_stage_modules(knobs), knobs.sp_gather == SpGather::fp8, knobs.fsdp != FsdpMode::off);
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
  if (knobs.fsdp != FsdpMode::off) run_fsdp(knobs, layout, result);
  return result;
}

}  // namespace amaxcheck
