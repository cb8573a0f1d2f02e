#include "detectors/deadlock_detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/engine.h"

namespace amaxcheck {
namespace {

Participant participant_of(const Stuck& s, std::size_t step) {
  return Participant{s.rank, s.lane, s.op, s.op_name, s.origin, step, Access::none, s.reasons};
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

constexpr const char* cycle_prefix = "deadlock: wait-for cycle ";

/// Names each collective some lane waits in, and for each member that has not joined it
/// whether it never issued it or issued it behind another op on its stream (and which).
std::string hang_summary(const std::vector<Stuck>& stuck) {
  std::vector<std::string> causes;
  std::set<std::string> seen;
  for (const Stuck& s : stuck) {
    if ((s.missing_ranks.empty() && s.blocked.empty()) || !seen.insert(s.awaited).second) continue;
    std::vector<std::string> parts;
    if (!s.missing_ranks.empty()) parts.push_back(fmt::format("rank(s) {} never issued it", fmt::join(s.missing_ranks, ", ")));
    parts.insert(parts.end(), s.blocked.begin(), s.blocked.end());
    causes.push_back(fmt::format("{}: {}", s.awaited, fmt::join(parts, "; ")));
  }
  if (causes.empty()) return "hang: work remains and nothing can progress";
  return fmt::format("hang: ranks wait in {}", fmt::join(causes, "; and in "));
}

}  // namespace

bool is_wait_for_cycle(const Hazard& hazard) {
  return hazard.kind == HazardKind::deadlock && hazard.summary.starts_with(cycle_prefix);
}

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
    h.summary = fmt::format("{}{} -> back to the start", cycle_prefix, fmt::join(hops, " -> "));
    for (std::size_t i : cycle) {
      h.details.push_back(fmt::format("rank {} {} {} waits for {}", stuck[i].rank, stuck[i].lane, stuck[i].op_name, stuck[i].waiting_for));
    }
  } else {
    h.summary = hang_summary(stuck);
    for (const Stuck& s : stuck) {
      h.participants.push_back(participant_of(s, engine.steps()));
      h.details.push_back(fmt::format("rank {} {} {} waits for {}", s.rank, s.lane, s.op_name, s.waiting_for));
    }
  }
  hazards_.push_back(std::move(h));
}

}  // namespace amaxcheck
