#include "protocols/sharing.h"

#include <fmt/format.h>

namespace amaxcheck {
namespace {

const char* dim_name(Dim dim) {
  switch (dim) {
    case Dim::tp: return "TP";
    case Dim::cp: return "CP";
    case Dim::dp: return "DP";
    case Dim::pp: return "PP";
  }
  return "?";
}

std::uint32_t size_of(const ProtocolKnobs& knobs, Dim dim) {
  switch (dim) {
    case Dim::tp: return knobs.tp;
    case Dim::cp: return knobs.cp;
    case Dim::dp: return knobs.dp;
    case Dim::pp: return knobs.pp;
  }
  return 1;
}

}  // namespace

SharingRule sharing_rule(ProtocolName protocol) {
  if (protocol == ProtocolName::current_scaling) return SharingRule{{Dim::tp}, {}};
  return SharingRule{{Dim::tp, Dim::cp}, {Dim::dp}};
}

GroupKind sharing_group_kind(ProtocolName protocol) {
  return protocol == ProtocolName::current_scaling ? GroupKind::tp : GroupKind::tp_dp;
}

Groups sharing_groups(const Layout& layout, ProtocolName protocol) {
  const SharingRule rule = sharing_rule(protocol);
  std::vector<Dim> varying = rule.shards;
  varying.insert(varying.end(), rule.replicas.begin(), rule.replicas.end());
  return layout.partition(varying);
}

std::string sharing_label(const ProtocolKnobs& knobs) {
  const SharingRule rule = sharing_rule(knobs.protocol);
  std::vector<std::string> parts;
  for (Dim dim : rule.shards) {
    if (size_of(knobs, dim) > 1) parts.push_back(fmt::format("{} shards", dim_name(dim)));
  }
  for (Dim dim : rule.replicas) {
    if (size_of(knobs, dim) > 1) parts.push_back(fmt::format("{} replicas", dim_name(dim)));
  }
  return parts.empty() ? "one rank" : fmt::format("{}", fmt::join(parts, " x "));
}

}  // namespace amaxcheck
