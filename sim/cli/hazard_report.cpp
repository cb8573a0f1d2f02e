#include "cli/hazard_report.h"

#include <fmt/format.h>

#include <algorithm>

namespace amaxcheck::cli {

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

std::string format_hazard_groups(const std::vector<Hazard>& hazards, const std::string& replay_command) {
  std::vector<std::pair<std::string, std::vector<const Hazard*>>> groups;
  for (const Hazard& h : hazards) {
    std::vector<std::string> names;
    for (const Participant& p : h.participants) names.push_back(p.op_name);
    std::sort(names.begin(), names.end());
    const std::string key = fmt::format("{}|{}", to_string(h.kind), fmt::join(names, ","));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) groups.push_back({key, {&h}});
    else it->second.push_back(&h);
  }
  std::string out;
  for (const auto& [key, members] : groups) {
    out += format_hazard(*members.front(), replay_command);
    if (members.size() > 1) {
      out += fmt::format("    (+{} more {} between the same ops on other ranks or iterations; --json lists all)\n",
                         members.size() - 1, to_string(members.front()->kind));
    }
  }
  return out;
}

std::string hazard_kinds(const std::vector<Hazard>& hazards) {
  std::vector<std::string> kinds;
  for (const Hazard& h : hazards) {
    const std::string k = to_string(h.kind);
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  }
  return kinds.empty() ? "-" : fmt::format("{}", fmt::join(kinds, ", "));
}

}  // namespace amaxcheck::cli
