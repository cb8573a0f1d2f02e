#include "protocols/layout.h"

#include <algorithm>

#include "protocols/sharing.h"
#include "util/check.h"

namespace amaxcheck {

std::uint32_t& Coord::operator[](Dim dim) {
  switch (dim) {
    case Dim::tp: return tp;
    case Dim::cp: return cp;
    case Dim::dp: return dp;
    case Dim::pp: return pp;
  }
  return pp;
}

std::uint32_t Coord::operator[](Dim dim) const { return (*const_cast<Coord*>(this))[dim]; }

Layout::Layout(const ProtocolKnobs& knobs) : knobs_(knobs) {
  size_[static_cast<int>(Dim::tp)] = knobs.tp;
  size_[static_cast<int>(Dim::cp)] = knobs.cp;
  size_[static_cast<int>(Dim::dp)] = knobs.dp;
  size_[static_cast<int>(Dim::pp)] = knobs.pp;
  for (Dim dim : knobs.order) {
    stride_[static_cast<int>(dim)] = world_;
    world_ *= size_[static_cast<int>(dim)];
  }
}

Coord Layout::coord(RankId rank) const {
  Coord c;
  for (Dim dim : knobs_.order) {
    const int d = static_cast<int>(dim);
    c[dim] = (rank / stride_[d]) % size_[d];
  }
  return c;
}

RankId Layout::rank(const Coord& c) const {
  RankId r = 0;
  for (Dim dim : knobs_.order) r += c[dim] * stride_[static_cast<int>(dim)];
  return r;
}

Groups Layout::partition(const std::vector<Dim>& varying) const {
  const auto varies = [&](Dim dim) { return std::find(varying.begin(), varying.end(), dim) != varying.end(); };
  Groups groups;
  std::vector<bool> placed(world_, false);
  for (RankId first = 0; first < world_; ++first) {
    if (placed[first]) continue;
    std::vector<RankId> group;
    const Coord base = coord(first);
    for (RankId r = first; r < world_; ++r) {
      const Coord c = coord(r);
      bool same = true;
      for (Dim dim : {Dim::tp, Dim::cp, Dim::dp, Dim::pp}) {
        if (!varies(dim) && c[dim] != base[dim]) same = false;
      }
      if (same) {
        group.push_back(r);
        placed[r] = true;
      }
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

Groups Layout::amax_groups() const {
  GroupKind kind = knobs_.group;
  if (kind == GroupKind::automatic) kind = sharing_group_kind(knobs_.protocol);
  switch (kind) {
    case GroupKind::dp: return partition({Dim::cp, Dim::dp});
    case GroupKind::tp: return partition({Dim::tp});
    case GroupKind::tp_dp: return partition({Dim::tp, Dim::cp, Dim::dp});
    case GroupKind::world: return partition({Dim::tp, Dim::cp, Dim::dp, Dim::pp});
    case GroupKind::automatic: break;
    case GroupKind::explicit_lists: {
      Groups groups = knobs_.explicit_groups;
      for (auto& group : groups) std::sort(group.begin(), group.end());
      std::sort(groups.begin(), groups.end());
      return groups;
    }
  }
  AMAX_CHECK(false, "unresolved amax group kind");
}

std::size_t Layout::group_of(const Groups& groups, RankId rank) {
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (std::find(groups[g].begin(), groups[g].end(), rank) != groups[g].end()) return g;
  }
  AMAX_CHECK(false, "rank in no group");
}

}  // namespace amaxcheck
