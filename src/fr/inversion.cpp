#include "fr/inversion.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace amaxcheck::fr {
namespace {

constexpr std::int64_t none = -1;  // seqs are non-negative (dump.h)

/// For one rank: each seq of b (>= b.lo, first occurrence) and the seq of the last collective of
/// a (>= a.lo) it issued before it (`none` when there is none), sorted by b's seq.
std::vector<std::pair<std::int64_t, std::int64_t>> last_before(const Job& job, const RankRecords& a, std::int64_t lo_a,
                                                               const RankRecords& b, std::int64_t lo_b) {
  const auto seq_of = [&](std::uint32_t dump, std::uint32_t i) { return job.dumps()[dump].records[i].collective_seq_id; };
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  std::size_t ia = 0;
  std::int64_t last = none;
  for (const std::uint32_t p : b.issued) {
    for (; ia < a.issued.size() && a.issued[ia] < p; ++ia) {
      if (const std::int64_t s = seq_of(a.dump, a.issued[ia]); s >= lo_a) last = s;
    }
    if (const std::int64_t s = seq_of(b.dump, p); s >= lo_b) out.emplace_back(s, last);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  out.erase(std::unique(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
            out.end());
  return out;
}

struct Shared {
  const RankRecords* a;
  const RankRecords* b;
};

std::uint32_t first_position(const RankRecords& part, std::int64_t seq) { return part.by_seq[part.at(seq).first].second; }
bool has_seq(const RankRecords& part, std::int64_t seq) {
  const auto [lo, hi] = part.at(seq);
  return lo != hi;
}

std::optional<Divergence> inversion(const Job& job, const GroupRecords& a, const GroupRecords& b,
                                    const std::vector<Shared>& shared) {
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> last;
  for (const Shared& s : shared) last.push_back(last_before(job, *s.a, a.lo, *s.b, b.lo));
  // the seqs of b every shared rank issued, ascending
  std::vector<std::int64_t> common;
  for (const auto& [j, at] : last.front()) common.push_back(j);
  for (std::size_t k = 1; k < last.size() && !common.empty(); ++k) {
    std::vector<std::int64_t> both;
    std::size_t c = 0;
    for (const auto& [j, at] : last[k]) {
      while (c < common.size() && common[c] < j) ++c;
      if (c < common.size() && common[c] == j) both.push_back(j);
    }
    common = std::move(both);
  }
  std::vector<std::size_t> cursor(shared.size(), 0);
  std::vector<std::int64_t> at(shared.size());
  for (const std::int64_t j : common) {
    for (std::size_t k = 0; k < shared.size(); ++k) {
      while (last[k][cursor[k]].first < j) ++cursor[k];
      at[k] = last[k][cursor[k]].second;
    }
    if (std::all_of(at.begin(), at.end(), [&](std::int64_t x) { return x == at.front(); })) continue;
    // ranks ascend in `shared`, so the first minimum and the last maximum break ties by rank
    std::size_t early = 0, late = 0;
    for (std::size_t k = 1; k < shared.size(); ++k) {
      if (at[k] < at[early]) early = k;
      if (at[k] >= at[late]) late = k;
    }
    const RankRecords& early_a = *shared[early].a;
    const RankRecords& late_a = *shared[late].a;
    const std::int64_t a_seq = at[early] != none ? at[early] + 1 : late_a.by_seq[late_a.at(a.lo).first].first;
    if (!has_seq(early_a, a_seq) || !has_seq(late_a, a_seq)) continue;  // a not_joined, reported per group
    const std::string& a_name = job.text(a.name);
    const std::string& b_name = job.text(b.name);
    const std::int64_t early_rank = early_a.rank, late_rank = late_a.rank;
    Divergence d;
    d.group = a_name;
    d.seq = a_seq;
    d.other = {b_name, j};
    d.findings.push_back({FindingKind::order_inversion,
                          fmt::format("rank {} issues group {} #{} before group {} #{}; rank {} issues group {} #{} first",
                                      late_rank, a_name, a_seq, b_name, j, early_rank, b_name, j)});
    d.ranks = {std::min(early_rank, late_rank), std::max(early_rank, late_rank)};
    const auto ref = [](const RankRecords& part, std::uint32_t i) { return RecordRef{part.dump, i}; };
    d.records.emplace_back(late_rank, std::vector<RecordRef>{ref(late_a, first_position(late_a, a_seq)),
                                                             ref(*shared[late].b, first_position(*shared[late].b, j))});
    d.records.emplace_back(early_rank,
                           std::vector<RecordRef>{ref(*shared[early].b, first_position(*shared[early].b, j)),
                                                  ref(early_a, first_position(early_a, a_seq))});
    d.time_ns = earliest(job, d.records);
    return d;
  }
  return std::nullopt;
}

}  // namespace

bool inversion_deadlocks(const GroupRecords& a, const GroupRecords& b, Kernels kernels) {
  if (kernels != Kernels::auto_detect) return kernels == Kernels::serialized;
  const std::vector<std::string> nccl = {"nccl"};
  return a.backends == nccl && b.backends == nccl;
}

std::vector<Divergence> find_inversions(const Job& job, const Alignment& alignment, Kernels kernels) {
  std::map<std::int64_t, std::vector<std::pair<std::uint32_t, const RankRecords*>>> groups_of;  // in group order
  for (std::uint32_t g = 0; g < alignment.groups.size(); ++g) {
    for (const RankRecords& part : alignment.groups[g].ranks) groups_of[part.rank].emplace_back(g, &part);
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Shared>> pairs;  // ranks ascending
  for (const auto& [rank, groups] : groups_of) {
    for (std::size_t x = 0; x < groups.size(); ++x) {
      for (std::size_t y = x + 1; y < groups.size(); ++y) {
        pairs[{groups[x].first, groups[y].first}].push_back({groups[x].second, groups[y].second});
      }
    }
  }
  std::vector<Divergence> found;
  for (const auto& [pair, shared] : pairs) {
    if (shared.size() < 2) continue;
    const GroupRecords& a = alignment.groups[pair.first];
    const GroupRecords& b = alignment.groups[pair.second];
    if (auto inv = inversion(job, a, b, shared)) {
      inv->deadlocks = inversion_deadlocks(a, b, kernels);
      found.push_back(std::move(*inv));
    }
  }
  return found;
}

}  // namespace amaxcheck::fr
