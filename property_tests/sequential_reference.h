#pragma once
/// An independent sequential reference for FP8 delayed and current scaling, written for the
/// property tests in the simplest code we could manage.
///
/// It deliberately shares no arithmetic with the code under test: not the engine's
/// fp8_math (abs_max, amax_and_scale_update), not the protocol library's reference model or
/// Layout. It reads only the knobs and the tensor values a protocol feeds its casts
/// (protocols/schedule.h's tensor_values, which is the *input* both sides agree on, not logic).
///
/// Semantics, from TransformerEngine:
/// - local amax = max |x| ignoring NaN (fmaxf starting from +0);
/// - the all-reduce MAX is fmaxf too (NaN-ignoring);
/// - the history window is reduced with `max` as torch.max does (NaN propagates) or with
///   `most_recent` (row 0);
/// - scale = (fp8_max / amax) / 2^margin when amax is finite and > 0, else kept; an infinite
///   scale becomes FLT_MAX; scale_inv = 1 / scale;
/// - the history then rolls like torch.roll(h, -1, 0) and row 0 is zeroed.
///
/// A --frozen module registers its forward amaxes and has no backward (no backward updates, no
/// recomputation). Where the reduction is launched (--reduce-at) changes nothing here: every
/// placement means the same reduced amax.
///
/// Rank layout: the default tp-cp-dp-pp order with cp = 1, i.e. rank = tp + TP*(dp + DP*pp).

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "protocols/protocol.h"

namespace amaxcheck::props {

/// max |x| over `values`, NaN-ignoring, +0 for none.
float local_amax(std::span<const float> values);

/// One amax_and_scale_update over `tensors` tensors, in place.
void scale_update(std::vector<float>& history, std::vector<float>& scale, std::vector<float>& scale_inv,
                  std::uint32_t tensors, std::uint32_t history_len, HistoryAlgo algo, int margin,
                  Fp8Format format);

/// FP8 metadata after one scale update of one history buffer (or one tensor of it).
struct UpdateRecord {
  std::uint32_t autocast = 0;   ///< expected records: the autocast (iter x microbatches) it consumes
  std::vector<float> consumed;  ///< the history the update read (row 0 = the reduced amax)
  std::vector<float> history;   ///< after
  std::vector<float> scale;
  std::vector<float> scale_inv;
};

/// Which updates: rank, module, direction (0 forward, 1 backward) and, for current scaling,
/// the tensor (delayed scaling updates a module's tensors together: tensor 0 stands for all).
struct UpdateKey {
  RankId rank = 0;
  std::uint32_t module = 0;
  std::uint32_t dir = 0;
  std::uint32_t tensor = 0;
  friend auto operator<=>(const UpdateKey&, const UpdateKey&) = default;
};

using UpdateLog = std::map<UpdateKey, std::vector<UpdateRecord>>;

/// The rank's configured amax reduction group (every rank of it, itself included, sorted).
std::vector<RankId> amax_group(const ProtocolKnobs& knobs, RankId rank);
/// The ranks that hold replicas or shards of `rank`'s tensors, from the layout alone (sorted):
/// its pipeline stage for delayed scaling, its TP peers (same DP index and stage) for current
/// scaling. Reductions and agreement are expected over these, whatever the configured group.
std::vector<RankId> replica_group(const ProtocolKnobs& knobs, RankId rank);

/// Every update the protocol should perform, in order, per key. The knobs must describe a
/// design whose reductions match (every member of a group quantizes the same tensors).
UpdateLog expected_updates(const ProtocolKnobs& knobs);

/// Bitwise equality (so NaN equals the same NaN and -0 differs from +0).
bool same_bits(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace amaxcheck::props
