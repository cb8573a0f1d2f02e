#include "shrink/scenario_reduce.h"

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

/// One program (and its ops' origins) after member `removed` of communicator `c` left it: the
/// member indices after it shift down, and a send or recv paired with it goes with it, as the
/// member's own ops do (left, it would pair with whichever member took its index). False when
/// a broadcast is rooted at it: that has no source any more, so there is no such candidate.
bool leave_member(std::vector<Op>& program, std::vector<std::uint32_t>& origins, CommId c, std::uint32_t removed) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < program.size(); ++i) {
    Op& op = program[i];
    const bool rooted = op.kind == OpKind::broadcast, paired = is_p2p(op.kind);
    if (op.comm == c && (rooted || paired)) {
      std::uint32_t& member = rooted ? op.root : op.peer;
      if (member == removed && rooted) return false;
      if (member == removed) continue;  // its partner is gone: dropped
      if (member > removed) --member;
    }
    if (kept != i) {
      program[kept] = std::move(op);
      origins[kept] = origins[i];
    }
    ++kept;
  }
  program.resize(kept);
  origins.resize(kept);
  return true;
}

}  // namespace

Lineage Lineage::identity(const Scenario& scenario) {
  Lineage lineage;
  for (RankId r = 0; r < scenario.ranks.size(); ++r) {
    lineage.ranks.push_back(r);
    auto& threads = lineage.ops.emplace_back();
    for (const Thread& thread : scenario.ranks[r].threads) {
      auto& indices = threads.emplace_back(thread.program.size());
      for (std::uint32_t i = 0; i < indices.size(); ++i) indices[i] = i;
    }
  }
  for (std::size_t c = 0; c < scenario.checks.size(); ++c) lineage.checks.push_back(c);
  return lineage;
}

OpRef Lineage::original(const OpRef& reduced) const {
  return OpRef{ranks.at(reduced.rank), reduced.thread, ops.at(reduced.rank).at(reduced.thread).at(reduced.index)};
}

Reduced unreduced(const Scenario& scenario) { return Reduced{scenario, Lineage::identity(scenario)}; }

std::optional<Reduced> drop_rank(const Reduced& from, RankId rank) {
  const Scenario& scenario = from.scenario;
  if (scenario.ranks.size() <= 1 || rank >= scenario.ranks.size()) return std::nullopt;
  Reduced reduced = from;
  Scenario& out = reduced.scenario;
  out.ranks.erase(out.ranks.begin() + rank);
  reduced.lineage.ranks.erase(reduced.lineage.ranks.begin() + rank);
  reduced.lineage.ops.erase(reduced.lineage.ops.begin() + rank);
  for (CommId c = 0; c < out.comms.size(); ++c) {
    Communicator& comm = out.comms[c];
    const int removed = member_index(comm, rank);
    if (removed >= 0) {
      const auto member = static_cast<std::uint32_t>(removed);
      for (std::size_t r = 0; r < out.ranks.size(); ++r) {
        for (std::size_t t = 0; t < out.ranks[r].threads.size(); ++t) {
          if (!leave_member(out.ranks[r].threads[t].program, reduced.lineage.ops[r][t], c, member)) return std::nullopt;
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
  std::vector<std::size_t> kept;
  for (std::size_t c = 0; c < out.checks.size(); ++c) {
    if (!out.checks[c].replicas.empty()) kept.push_back(c);
  }
  if (kept.size() < out.checks.size()) return keep_checks(reduced, kept);
  return reduced;
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

Reduced keep_ops(const Reduced& from, const std::vector<OpRef>& kept) {
  Reduced out = from;
  for (RankId r = 0; r < out.scenario.ranks.size(); ++r) {
    for (ThreadId t = 0; t < out.scenario.ranks[r].threads.size(); ++t) {
      out.scenario.ranks[r].threads[t].program.clear();
      out.lineage.ops[r][t].clear();
    }
  }
  for (const OpRef& ref : kept) {
    out.scenario.ranks[ref.rank].threads[ref.thread].program.push_back(
        from.scenario.ranks[ref.rank].threads[ref.thread].program[ref.index]);
    out.lineage.ops[ref.rank][ref.thread].push_back(from.lineage.ops[ref.rank][ref.thread][ref.index]);
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

Reduced drop_origin_group(const Reduced& from, const std::string& group) {
  std::vector<OpRef> kept;
  for (const OpRef& ref : all_ops(from.scenario)) {
    const auto parts = segments(from.scenario.ranks[ref.rank].threads[ref.thread].program[ref.index].origin);
    if (std::find(parts.begin(), parts.end(), group) == parts.end()) kept.push_back(ref);
  }
  return keep_ops(from, kept);
}

Reduced keep_checks(const Reduced& from, const std::vector<std::size_t>& kept) {
  Reduced out = from;
  out.scenario.checks.clear();
  out.lineage.checks.clear();
  for (std::size_t c : kept) {
    out.scenario.checks.push_back(from.scenario.checks[c]);
    out.lineage.checks.push_back(from.lineage.checks[c]);
  }
  return out;
}

}  // namespace amaxcheck::sched
