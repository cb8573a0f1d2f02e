#pragma once
/// Where every rank sits in the DP x TP x PP x CP grid, and which groups that implies.
///
/// Rank numbers follow `ProtocolKnobs::order` (fastest-varying dimension first; Megatron's
/// default is tp-cp-dp-pp). Groups are partitions of the ranks, each sorted, listed in order
/// of their smallest rank, so every consumer (program generator, reference model, checks)
/// sees the same groups in the same order.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "protocols/protocol.h"

namespace amaxcheck {

struct Coord {
  std::uint32_t tp = 0, cp = 0, dp = 0, pp = 0;
  std::uint32_t& operator[](Dim dim);
  std::uint32_t operator[](Dim dim) const;
};

using Groups = std::vector<std::vector<RankId>>;

class Layout {
 public:
  explicit Layout(const ProtocolKnobs& knobs);

  std::uint32_t world() const { return world_; }
  Coord coord(RankId rank) const;
  RankId rank(const Coord& coord) const;
  std::uint32_t stage(RankId rank) const { return coord(rank).pp; }

  /// Ranks that differ only along `varying`: one group per value of the other dimensions.
  Groups partition(const std::vector<Dim>& varying) const;
  Groups partition(std::initializer_list<Dim> varying) const { return partition(std::vector<Dim>(varying)); }
  /// The gradient (DDP) groups: DP x CP within a TP index and a stage.
  Groups grad_groups() const { return partition({Dim::cp, Dim::dp}); }
  /// The amax reduction groups the knobs ask for (`group`), the design under test; `auto` is
  /// the correct group (sharing.h). What must hold is sharing_groups(), not this.
  Groups amax_groups() const;
  /// Index of the group holding `rank` in `groups`.
  static std::size_t group_of(const Groups& groups, RankId rank);

 private:
  ProtocolKnobs knobs_;
  std::array<std::uint32_t, 4> size_{};    // by Dim
  std::array<std::uint32_t, 4> stride_{};  // by Dim
  std::uint32_t world_ = 1;
};

}  // namespace amaxcheck
