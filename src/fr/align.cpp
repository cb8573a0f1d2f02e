#include "fr/align.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "fr/describe.h"

namespace amaxcheck::fr {

std::pair<std::size_t, std::size_t> RankRecords::at(std::int64_t seq) const {
  const auto lo = std::lower_bound(by_seq.begin(), by_seq.end(), std::pair<std::int64_t, std::uint32_t>{seq, 0});
  auto hi = lo;
  while (hi != by_seq.end() && hi->first == seq) ++hi;
  return {static_cast<std::size_t>(lo - by_seq.begin()), static_cast<std::size_t>(hi - by_seq.begin())};
}

std::string GroupRecords::backend() const {
  return backends.empty() ? "unknown" : fmt::format("{}", fmt::join(backends, "/"));
}

const RankRecords* GroupRecords::of_rank(std::int64_t rank) const {
  const auto it = std::lower_bound(ranks.begin(), ranks.end(), rank,
                                   [](const RankRecords& r, std::int64_t k) { return r.rank < k; });
  return it != ranks.end() && it->rank == rank ? &*it : nullptr;
}

Alignment align(const Job& job) {
  Alignment out;
  std::vector<GroupRecords> groups;  // in order of first appearance
  std::vector<std::set<std::string_view>> backends;
  for (std::uint32_t d = 0; d < job.dumps().size(); ++d) {
    const Dump& dump = job.dumps()[d];
    out.wrapped.push_back(!dump.records.empty() && dump.records.front().record_id > 0);
    for (std::uint32_t i = 0; i < dump.records.size(); ++i) {
      const Record& r = dump.records[i];
      if (r.is_p2p) continue;
      const std::uint32_t name = job.text_id(d, r.pg_name);
      const auto [it, fresh] = out.group_of.emplace(name, static_cast<std::uint32_t>(groups.size()));
      if (fresh) {
        GroupRecords& g = groups.emplace_back();
        g.name = name;
        g.desc = job.text_id(d, r.pg_desc);
        backends.emplace_back();
      }
      GroupRecords& g = groups[it->second];
      if (g.ranks.empty() || g.ranks.back().dump != d) {
        RankRecords& part = g.ranks.emplace_back();
        part.dump = d;
        part.rank = dump.rank;
      }
      RankRecords& part = g.ranks.back();
      part.by_seq.emplace_back(r.collective_seq_id, i);
      part.issued.push_back(i);
      if (const std::string_view b = job.backend({d, i}); !b.empty()) backends[it->second].insert(b);
    }
  }
  for (std::size_t k = 0; k < groups.size(); ++k) {
    GroupRecords& g = groups[k];
    g.backends.assign(backends[k].begin(), backends[k].end());
    g.lo = g.hi = 0;
    bool seen = false;
    for (RankRecords& part : g.ranks) {
      // a rank's records of one group come in seq order; sort anyway so first/last hold
      std::sort(part.by_seq.begin(), part.by_seq.end());
      g.lo = seen ? std::max(g.lo, part.first()) : part.first();
      g.hi = seen ? std::max(g.hi, part.last()) : part.last();
      seen = true;
    }
  }
  std::vector<std::uint32_t> order(groups.size());
  for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::vector<std::size_t> length(groups.size());
  for (std::size_t k = 0; k < groups.size(); ++k) length[k] = count_code_points(job.text(groups[k].name));
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (length[a] != length[b]) return length[a] < length[b];
    return job.text(groups[a].name) < job.text(groups[b].name);  // UTF-8 bytes sort as code points
  });
  for (std::uint32_t k : order) {
    out.group_of[groups[k].name] = static_cast<std::uint32_t>(out.groups.size());
    out.groups.push_back(std::move(groups[k]));
  }
  return out;
}

}  // namespace amaxcheck::fr
