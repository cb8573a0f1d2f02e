#include "detectors/deadlock_detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/engine.h"

namespace amaxcheck {
namespace {

Participant participant_of(const Stuck& s, std::size_t step) {
  return Participant{s.rank, s.lane, s.op, s.op_name, s.origin, step};
}

/// A cycle in the wait-for graph among stuck lanes, as indices into `stuck`; empty if none.
std::vector<std::size_t> find_cycle(const std::vector<Stuck>& stuck) {
  std::map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < stuck.size(); ++i) index[stuck[i].lane_key] = i;
  std::vector<int> color(stuck.size(), 0);  // 0 new, 1 on the stack, 2 done
  std::vector<std::size_t> path;
  std::vector<std::size_t> cycle;
  auto visit = [&](auto&& self, std::size_t i) -> bool {
    color[i] = 1;
    path.push_back(i);
    for (std::uint64_t next_key : stuck[i].waits_on) {
      auto it = index.find(next_key);
      if (it == index.end()) continue;
      const std::size_t j = it->second;
      if (color[j] == 1) {
        auto from = std::find(path.begin(), path.end(), j);
        cycle.assign(from, path.end());
        return true;
      }
      if (color[j] == 0 && self(self, j)) return true;
    }
    path.pop_back();
    color[i] = 2;
    return false;
  };
  for (std::size_t i = 0; i < stuck.size(); ++i) {
    if (color[i] == 0 && visit(visit, i)) return cycle;
  }
  return {};
}

}  // namespace

void DeadlockDetector::on_finish(const Engine& engine) {
  if (engine.done()) return;
  const std::vector<Stuck> stuck = engine.stuck();
  Hazard h;
  h.kind = HazardKind::deadlock;
  const std::vector<std::size_t> cycle = find_cycle(stuck);
  if (!cycle.empty()) {
    std::vector<std::string> hops;
    for (std::size_t i : cycle) {
      hops.push_back(fmt::format("rank {} {} ({})", stuck[i].rank, stuck[i].lane, stuck[i].op_name));
      h.participants.push_back(participant_of(stuck[i], engine.steps()));
    }
    h.summary = fmt::format("deadlock: wait-for cycle {} -> back to the start", fmt::join(hops, " -> "));
    for (std::size_t i : cycle) {
      h.details.push_back(fmt::format("rank {} {} {} waits for {}", stuck[i].rank, stuck[i].lane, stuck[i].op_name, stuck[i].waiting_for));
    }
  } else {
    std::set<RankId> missing;
    for (const Stuck& s : stuck) missing.insert(s.missing_ranks.begin(), s.missing_ranks.end());
    h.summary = missing.empty() ? "hang: work remains and nothing can progress"
                                : fmt::format("hang: rank(s) {} never joined a collective other ranks wait in", fmt::join(missing, ", "));
    for (const Stuck& s : stuck) {
      h.participants.push_back(participant_of(s, engine.steps()));
      h.details.push_back(fmt::format("rank {} {} {} waits for {}", s.rank, s.lane, s.op_name, s.waiting_for));
    }
  }
  hazards_.push_back(std::move(h));
}

}  // namespace amaxcheck
