#include "fr/window.h"

#include <algorithm>
#include <unordered_map>

namespace amaxcheck::fr {

ScenarioWindow scenario_window(const Job& job, const Alignment& alignment, const AgreementReport& report,
                               std::int64_t window) {
  std::vector<std::int64_t> end;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t g = 0; g < alignment.groups.size(); ++g) {
    const GroupReport& r = report.groups[g];
    end.push_back(r.first ? *r.first->seq : r.hi);
    index.emplace(r.name, g);
  }
  for (const Divergence& inv : report.inversions) {
    std::int64_t& a = end[index.at(inv.group)];
    std::int64_t& b = end[index.at(inv.other->first)];
    a = std::min(a, *inv.seq);
    b = std::min(b, inv.other->second);
  }
  ScenarioWindow out;
  for (std::size_t g = 0; g < alignment.groups.size(); ++g) {
    out.seqs.emplace_back(std::max(alignment.groups[g].lo, end[g] - window + 1), end[g]);
  }
  for (std::uint32_t d = 0; d < job.dumps().size(); ++d) {
    auto& kept = out.kept.emplace_back();
    const auto& records = job.dumps()[d].records;
    for (std::uint32_t i = 0; i < records.size(); ++i) {
      const Record& r = records[i];
      if (r.is_p2p) continue;
      const auto [lo, hi] = out.seqs[alignment.group_of.at(job.text_id(d, r.pg_name))];
      if (lo <= r.collective_seq_id && r.collective_seq_id <= hi) kept.push_back(i);
    }
  }
  return out;
}

}  // namespace amaxcheck::fr
