#include "cli/hazard_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "util/check.h"

namespace amaxcheck::cli {
namespace {

template <typename T>
void sort_unique(std::vector<T>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

std::string subject_text(const std::string& subject) { return subject.empty() ? "-" : subject; }

/// What a kind's subjects are called in a tally.
const char* subject_noun(HazardKind kind) {
  switch (kind) {
    case HazardKind::data_race: return "buffer";
    case HazardKind::value_mismatch:
    case HazardKind::replica_divergence: return "tensor";
    case HazardKind::collective_mismatch:
    case HazardKind::ordering_hazard:
    case HazardKind::unjoined_collective: return "comm";
    case HazardKind::deadlock: break;
  }
  return "";
}

}  // namespace

std::string format_hazard(const Hazard& hazard, const std::string& replay_command) {
  std::string out = fmt::format("  {}: {}\n", to_string(hazard.kind), hazard.summary);
  for (const Participant& p : hazard.participants) {
    out += fmt::format("    rank {} {}: {}{} (thread {} op {}, step {})\n", p.rank, p.lane, p.op_name,
                       p.origin.empty() ? "" : " [" + p.origin + "]", p.op.thread, p.op.index, p.step);
  }
  for (const std::string& d : hazard.details) out += "    " + d + "\n";
  if (!replay_command.empty()) out += "    replay: " + replay_command + "\n";
  return out;
}

nlohmann::ordered_json hazard_json(const Hazard& hazard, const std::string& replay_command) {
  nlohmann::ordered_json j;
  j["kind"] = to_string(hazard.kind);
  j["subject"] = hazard.subject;
  j["summary"] = hazard.summary;
  j["participants"] = nlohmann::ordered_json::array();
  for (const Participant& p : hazard.participants) {
    j["participants"].push_back({{"rank", p.rank}, {"lane", p.lane}, {"op", p.op_name}, {"thread", p.op.thread},
                                 {"index", p.op.index}, {"origin", p.origin}, {"step", p.step}});
  }
  j["details"] = hazard.details;
  j["replay"] = replay_command;
  return j;
}

std::size_t hazard_step(const Hazard& hazard) {
  std::size_t step = 0;
  for (const Participant& p : hazard.participants) step = std::max(step, p.step);
  return step;
}

std::vector<HazardGroup> group_hazards(const std::vector<Hazard>& hazards) {
  std::vector<const Hazard*> by_time;
  for (const Hazard& h : hazards) by_time.push_back(&h);
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const Hazard* a, const Hazard* b) { return hazard_step(*a) < hazard_step(*b); });
  std::vector<HazardGroup> groups;
  for (const Hazard* h : by_time) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const HazardGroup& g) { return g.kind == h->kind && g.subject == h->subject; });
    if (it == groups.end()) it = groups.insert(groups.end(), HazardGroup{h->kind, h->subject, {}, {}, {}});
    it->members.push_back(h);
    for (const Participant& p : h->participants) {
      it->ranks.push_back(p.rank);
      it->ops.push_back(p.op_name);
    }
  }
  for (HazardGroup& g : groups) {
    sort_unique(g.ranks);
    sort_unique(g.ops);
  }
  return groups;
}

std::string format_hazard_groups(const std::vector<Hazard>& hazards, const std::vector<std::string>& replays) {
  AMAX_CHECK(replays.empty() || replays.size() == hazards.size(), "one replay command per hazard, or none");
  const std::vector<HazardGroup> groups = group_hazards(hazards);
  std::string out;
  std::set<HazardKind> shown;
  for (const HazardGroup& g : groups) {
    const auto index = static_cast<std::size_t>(g.members.front() - hazards.data());
    if (shown.insert(g.kind).second) out += format_hazard(*g.members.front(), replays.empty() ? "" : replays[index]);
  }
  if (hazards.size() < 2) return out;
  out += fmt::format("  hazards by kind and tensor ({} in all, the first in time first; --json lists each):\n",
                     hazards.size());
  for (const HazardGroup& g : groups) {
    out += fmt::format("    {:<19} {}: {} on rank{} {} ({})\n", to_string(g.kind), subject_text(g.subject), g.members.size(),
                       g.ranks.size() == 1 ? "" : "s", fmt::join(g.ranks, ", "), fmt::join(g.ops, ", "));
  }
  return out;
}

nlohmann::ordered_json hazard_groups_json(const std::vector<Hazard>& hazards) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const HazardGroup& g : group_hazards(hazards)) {
    out.push_back({{"kind", to_string(g.kind)},
                   {"subject", g.subject},
                   {"count", g.members.size()},
                   {"ranks", g.ranks},
                   {"ops", g.ops},
                   {"first", g.members.front() - hazards.data()}});
  }
  return out;
}

std::string hazard_kinds(const std::vector<Hazard>& hazards) {
  std::vector<std::string> kinds;
  for (const HazardGroup& g : group_hazards(hazards)) {
    const std::string k = to_string(g.kind);
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  }
  return kinds.empty() ? "-" : fmt::format("{}", fmt::join(kinds, ", "));
}

std::string hazard_tally(const std::vector<Hazard>& hazards) {
  struct Tally {
    HazardKind kind;
    std::size_t hazards = 0, subjects = 0;
  };
  std::vector<Tally> tallies;
  for (const HazardGroup& g : group_hazards(hazards)) {
    auto it = std::find_if(tallies.begin(), tallies.end(), [&](const Tally& t) { return t.kind == g.kind; });
    if (it == tallies.end()) it = tallies.insert(tallies.end(), Tally{g.kind});
    it->hazards += g.members.size();
    it->subjects += g.subject.empty() ? 0 : 1;
  }
  std::vector<std::string> parts;
  for (const Tally& t : tallies) {
    std::string part = fmt::format("{} x{}", to_string(t.kind), t.hazards);
    if (t.subjects > 0) part += fmt::format(" on {} {}{}", t.subjects, subject_noun(t.kind), t.subjects == 1 ? "" : "s");
    parts.push_back(part);
  }
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace amaxcheck::cli
