// Matching one group's records by collective_seq_id (agreement.h).
#include "fr/agreement.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "fr/aspects.h"
#include "fr/inversion.h"
#include "fr/show.h"

namespace amaxcheck::fr {
namespace {


/// Which dump holds each rank (dumps are sorted by rank).
const Dump* dump_of_rank(const Job& job, std::int64_t rank, std::uint32_t* index = nullptr) {
  const auto& dumps = job.dumps();
  const auto it = std::lower_bound(dumps.begin(), dumps.end(), rank, [](const Dump& d, std::int64_t r) { return d.rank < r; });
  if (it == dumps.end() || it->rank != rank) return nullptr;
  if (index) *index = static_cast<std::uint32_t>(it - dumps.begin());
  return &*it;
}

/// Every dump's pg_config entries by key: rank -> that dump's ProcessGroup.
using Listings = std::unordered_map<std::string, std::vector<std::pair<std::int64_t, const ProcessGroup*>>>;

Listings listings_of(const Job& job) {
  Listings out;
  for (const Dump& d : job.dumps()) {
    for (const ProcessGroup& pg : d.pg_config) out[pg.key].emplace_back(d.rank, &pg);
  }
  return out;
}

/// The group's members: the majority of the dumps' pg_config (more dumps, then the larger list),
/// with a finding when they disagree; else the ranks that recorded it.
std::vector<std::int64_t> group_members(const Listings& listings, const std::string& name, const GroupRecords& g,
                                        std::vector<Finding>& findings) {
  const auto listed = listings.find(name);
  if (listed == listings.end()) {
    std::vector<std::int64_t> out;
    for (const RankRecords& part : g.ranks) out.push_back(part.rank);
    return out;
  }
  std::map<std::vector<std::int64_t>, std::vector<std::int64_t>> variants;  // members -> the dumps saying so
  for (const auto& [rank, pg] : listed->second) {
    std::vector<std::int64_t> ranks = pg->ranks;
    std::sort(ranks.begin(), ranks.end());
    variants[std::move(ranks)].push_back(rank);
  }
  const std::vector<std::int64_t>* members = nullptr;
  std::size_t votes = 0;
  for (const auto& [ranks, saying] : variants) {
    if (saying.size() >= votes) members = &ranks, votes = saying.size();  // a tie goes to the larger list
  }
  if (variants.size() > 1) {
    std::string text = "the dumps disagree on the members: ";
    bool first = true;
    for (const auto& [ranks, saying] : variants) {
      text += fmt::format("{}rank(s) {} say {}", first ? "" : "; ", ranks_text(saying), python_list(ranks));
      first = false;
    }
    findings.push_back({FindingKind::membership_mismatch, std::move(text)});
  }
  return *members;
}

/// Ranks that did not join, one finding per reason, in order of their first rank.
std::vector<Finding> not_joined(const std::vector<std::pair<std::int64_t, std::string>>& absent) {
  std::map<std::string, std::vector<std::int64_t>> by_why;
  for (const auto& [rank, why] : absent) by_why[why].push_back(rank);
  std::vector<std::pair<std::int64_t, Finding>> found;
  for (const auto& [why, ranks] : by_why) {
    found.push_back({*std::min_element(ranks.begin(), ranks.end()),
                     {FindingKind::not_joined, fmt::format("rank{} {} {}", ranks.size() > 1 ? "s" : "", ranks_text(ranks), why)}});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Finding> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

}  // namespace

std::optional<std::int64_t> earliest(const Job& job,
                                     const std::vector<std::pair<std::int64_t, std::vector<RecordRef>>>& records) {
  std::optional<std::int64_t> out;
  for (const auto& [rank, refs] : records) {
    for (const RecordRef& ref : refs) {
      const std::int64_t t = job.record(ref).time_created_ns;
      if (t && (!out || t < *out)) out = t;
    }
  }
  return out;
}

namespace {

GroupReport check_group(const Job& job, const Alignment& alignment, const GroupRecords& g, const Listings& listings) {
  GroupReport report;
  report.name = job.text(g.name);
  report.desc = job.text(g.desc);
  report.backends = g.backends;
  report.lo = g.lo;
  report.hi = g.hi;
  report.members = group_members(listings, report.name, g, report.membership);
  std::map<std::int64_t, std::string> undecidable;
  std::vector<std::int64_t> never;
  std::vector<const RankRecords*> present;
  for (std::size_t i = 0; i < report.members.size(); ++i) {
    const std::int64_t r = report.members[i];
    std::uint32_t dump = 0;
    const bool repeated = i > 0 && report.members[i - 1] == r;  // a pg_config may list a rank twice
    if (!dump_of_rank(job, r, &dump)) {
      undecidable.emplace(r, "no dump");
      continue;
    }
    report.dumped.push_back(r);
    if (repeated) continue;
    if (const RankRecords* part = g.of_rank(r)) {
      present.push_back(part);
    } else if (alignment.wrapped[dump]) {
      // a wrapped buffer may have forgotten everything it did in this group
      undecidable.emplace(r, "its wrapped ring buffer holds no record of this group");
    } else {
      never.push_back(r);  // its whole history is there, and none of it is this group's
    }
  }
  const bool compare_states = g.backends != std::vector<std::string>{"gloo"};
  std::vector<std::int64_t> seqs;
  std::vector<std::size_t> cursor;
  for (const RankRecords* part : present) {
    const std::size_t from = part->at(g.lo).first;
    cursor.push_back(from);
    for (std::size_t k = from; k < part->by_seq.size(); ++k) seqs.push_back(part->by_seq[k].first);
  }
  std::sort(seqs.begin(), seqs.end());
  seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
  std::vector<Have> have;
  std::vector<std::pair<std::int64_t, std::string>> absent;
  for (const std::int64_t seq : seqs) {
    have.clear();
    absent.clear();
    for (std::size_t i = 0; i < present.size(); ++i) {
      const RankRecords& part = *present[i];
      std::size_t& c = cursor[i];
      while (c < part.by_seq.size() && part.by_seq[c].first < seq) ++c;
      if (c < part.by_seq.size() && part.by_seq[c].first == seq) {
        Have& h = have.emplace_back(Have{part.rank, {}});
        for (std::size_t k = c; k < part.by_seq.size() && part.by_seq[k].first == seq; ++k) {
          h.records.push_back({part.dump, part.by_seq[k].second});
        }
      } else if (part.last() < seq) {
        absent.emplace_back(part.rank, fmt::format("never issued it (its last is #{})", part.last()));
      } else {
        absent.emplace_back(part.rank, "has no record of it (a gap in its buffer)");
      }
    }
    for (std::int64_t r : never) absent.emplace_back(r, "never issued it (no record of this group in an unwrapped buffer)");
    const bool alike = all_alike(job, have, compare_states);
    if (absent.empty() && alike) {
      ++report.matched;
      continue;
    }
    const bool describe = !report.first;  // only the first divergence's findings are spelled
    std::vector<Finding> findings = describe ? not_joined(absent) : std::vector<Finding>{};
    std::vector<FindingKind> kinds;
    if (!absent.empty()) kinds.push_back(FindingKind::not_joined);
    std::vector<std::int64_t> deviating;
    for (const auto& [r, why] : absent) deviating.push_back(r);
    for (const Aspect aspect : alike ? std::vector<Aspect>{} : std::vector<Aspect>(std::begin(aspects), std::end(aspects))) {
      if (aspect == Aspect::states && !compare_states) continue;
      std::string text;
      const std::vector<std::int64_t> odd = deviants(job, aspect, have, describe ? &text : nullptr);
      if (odd.empty()) continue;
      kinds.push_back(kind_of(aspect));
      if (describe) findings.push_back({kind_of(aspect), std::move(text)});
      deviating.insert(deviating.end(), odd.begin(), odd.end());
    }
    if (kinds.empty()) {
      ++report.matched;
      continue;
    }
    ++report.divergent;
    std::sort(deviating.begin(), deviating.end());
    deviating.erase(std::unique(deviating.begin(), deviating.end()), deviating.end());
    report.divergent_seqs.push_back({seq, kinds, deviating});
    if (describe) {
      Divergence d;
      d.group = report.name;
      d.seq = seq;
      d.findings = std::move(findings);
      d.ranks = deviating;
      for (std::size_t i = 0; i < report.dumped.size(); ++i) {
        const std::int64_t r = report.dumped[i];
        if (undecidable.count(r) || (i > 0 && report.dumped[i - 1] == r)) continue;
        const auto h = std::find_if(have.begin(), have.end(), [&](const Have& x) { return x.rank == r; });
        d.records.emplace_back(r, h == have.end() ? Refs{} : h->records);
      }
      d.time_ns = earliest(job, d.records);
      report.first = std::move(d);
    }
  }
  report.undecidable.assign(undecidable.begin(), undecidable.end());
  return report;
}

}  // namespace

AgreementReport check(const Job& job, const Alignment& alignment, Kernels kernels) {
  AgreementReport report;
  const Listings listings = listings_of(job);
  for (const GroupRecords& g : alignment.groups) report.groups.push_back(check_group(job, alignment, g, listings));
  // Every rank the dumps show exists: the dumped ones, every pg_config member, and every rank
  // below the largest (ranks run 0..world_size-1); all below max_rank (dump.h).
  std::int64_t top = -1;
  for (const Dump& d : job.dumps()) {
    top = std::max(top, d.rank);
    for (const ProcessGroup& pg : d.pg_config) {
      for (std::int64_t r : pg.ranks) top = std::max(top, r);
    }
    for (const Record& r : d.records) report.p2p_ignored += r.is_p2p ? 1 : 0;
  }
  for (std::int64_t r = 0; r <= top; ++r) {
    if (!dump_of_rank(job, r)) report.missing_ranks.push_back(r);
  }
  if (!report.missing_ranks.empty()) {
    report.notes.push_back(fmt::format("no dump for rank(s) {}: what they did is unknown, so the job cannot be called "
                                       "consistent", ranks_text(report.missing_ranks)));
  }
  report.inversions = find_inversions(job, alignment, kernels);
  return report;
}

}  // namespace amaxcheck::fr
