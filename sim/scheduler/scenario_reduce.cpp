#include "scheduler/scenario_reduce.h"

#include <algorithm>
#include <set>

namespace amaxcheck::sched {
namespace {

std::vector<std::string> segments(const std::string& origin) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= origin.size()) {
    std::size_t end = origin.find(" / ", pos);
    if (end == std::string::npos) end = origin.size();
    std::string part = origin.substr(pos, end - pos);
    const auto first = part.find_first_not_of(' ');
    const auto last = part.find_last_not_of(' ');
    if (first != std::string::npos) out.push_back(part.substr(first, last - first + 1));
    pos = end + 3;
  }
  return out;
}

/// "iter 2", "module 10", "microbatch 0": a word followed by a number.
bool names_a_group(const std::string& segment) {
  const auto space = segment.rfind(' ');
  if (space == std::string::npos || space == 0 || space + 1 >= segment.size()) return false;
  return std::all_of(segment.begin() + static_cast<std::ptrdiff_t>(space) + 1, segment.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<Scenario> drop_rank(const Scenario& scenario, RankId rank) {
  if (scenario.ranks.size() <= 1 || rank >= scenario.ranks.size()) return std::nullopt;
  Scenario out = scenario;
  out.ranks.erase(out.ranks.begin() + rank);
  for (CommId c = 0; c < out.comms.size(); ++c) {
    Communicator& comm = out.comms[c];
    const int removed = member_index(comm, rank);
    if (removed >= 0) {
      // A broadcast rooted at the dropped member has no source any more; roots after it shift.
      for (Rank& r : out.ranks) {
        for (Thread& t : r.threads) {
          for (Op& op : t.program) {
            if (op.comm != c || op.kind != OpKind::broadcast) continue;
            if (op.root == static_cast<std::uint32_t>(removed)) return std::nullopt;
            if (op.root > static_cast<std::uint32_t>(removed)) --op.root;
          }
        }
      }
      comm.members.erase(comm.members.begin() + removed);
    }
    for (RankId& m : comm.members) {
      if (m > rank) --m;
    }
  }
  for (ReplicaCheck& check : out.checks) {
    std::erase_if(check.replicas, [&](const ReplicaCheck::Replica& r) { return r.rank == rank; });
    for (auto& r : check.replicas) {
      if (r.rank > rank) --r.rank;
    }
  }
  std::erase_if(out.checks, [](const ReplicaCheck& c) { return c.replicas.empty(); });
  return out;
}

std::vector<OpRef> all_ops(const Scenario& scenario) {
  std::vector<OpRef> ops;
  for (RankId r = 0; r < scenario.ranks.size(); ++r) {
    for (ThreadId t = 0; t < scenario.ranks[r].threads.size(); ++t) {
      for (std::uint32_t i = 0; i < scenario.ranks[r].threads[t].program.size(); ++i) ops.push_back(OpRef{r, t, i});
    }
  }
  return ops;
}

Scenario keep_ops(const Scenario& scenario, const std::vector<OpRef>& kept) {
  Scenario out = scenario;
  for (Rank& rank : out.ranks) {
    for (Thread& thread : rank.threads) thread.program.clear();
  }
  for (const OpRef& ref : kept) {
    out.ranks[ref.rank].threads[ref.thread].program.push_back(scenario.ranks[ref.rank].threads[ref.thread].program[ref.index]);
  }
  return out;
}

std::vector<std::string> origin_groups(const Scenario& scenario) {
  std::set<std::string> groups;
  for (const Rank& rank : scenario.ranks) {
    for (const Thread& thread : rank.threads) {
      for (const Op& op : thread.program) {
        for (const std::string& segment : segments(op.origin)) {
          if (names_a_group(segment)) groups.insert(segment);
        }
      }
    }
  }
  return {groups.begin(), groups.end()};
}

Scenario drop_origin_group(const Scenario& scenario, const std::string& group) {
  Scenario out = scenario;
  for (Rank& rank : out.ranks) {
    for (Thread& thread : rank.threads) {
      std::erase_if(thread.program, [&](const Op& op) {
        const auto parts = segments(op.origin);
        return std::find(parts.begin(), parts.end(), group) != parts.end();
      });
    }
  }
  return out;
}

std::size_t op_count(const Scenario& scenario) { return all_ops(scenario).size(); }

}  // namespace amaxcheck::sched
