#pragma once
/// Printing verdicts and hazards, for people (text) and machines (JSON).
/// Every hazard printout ends with the command that replays it.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "detectors/hazard.h"

namespace amaxcheck::cli {

/// "  data_race: RAW race on ...\n    rank 0 stream nccl: amax_reduce (iter 0 / ...) step 12\n ...
///  replay: amaxcheck replay out/x.jsonl"
std::string format_hazard(const Hazard& hazard, const std::string& replay_command);

nlohmann::ordered_json hazard_json(const Hazard& hazard, const std::string& replay_command);

/// When a hazard happened: the latest step among its participants (a race happens at its
/// second access, a wrong value when its last write lands).
std::size_t hazard_step(const Hazard& hazard);

/// The hazards of one kind about one subject (tensor, buffer or communicator).
struct HazardGroup {
  HazardKind kind = HazardKind::data_race;
  std::string subject;
  std::vector<const Hazard*> members;  ///< the first in time first
  std::vector<RankId> ranks;           ///< every participant's rank, sorted, distinct
  std::vector<std::string> ops;        ///< every participant's op name, sorted, distinct
};

/// Groups by kind and subject, the group whose first hazard happened first leading (ties keep
/// the detectors' order). The groups point into `hazards`.
std::vector<HazardGroup> group_hazards(const std::vector<Hazard>& hazards);

/// The report: the first hazard of each kind in full (the first in time first), then one line
/// per (kind, subject) group with its count, ranks and ops, so every affected tensor shows:
///   "  hazards by kind and tensor (5 in all, the first in time first; --json lists each):"
///   "    value_mismatch      stage 0 / module 0 / forward / scale: 2 on ranks 1, 3 (scale_update_fwd)"
/// `replays`: per hazard, the command that replays a trace showing it (none when empty).
std::string format_hazard_groups(const std::vector<Hazard>& hazards, const std::vector<std::string>& replays);

/// The groups for --json: [{kind, subject, count, ranks, ops, first: index into `hazards`}].
nlohmann::ordered_json hazard_groups_json(const std::vector<Hazard>& hazards);

/// "data_race, deadlock": the distinct kinds, the first in time first.
std::string hazard_kinds(const std::vector<Hazard>& hazards);

/// "data_race x2 on 1 buffer, value_mismatch x30 on 24 tensors": per kind, the first in time
/// first, how many hazards about how many distinct subjects; "-" for none.
std::string hazard_tally(const std::vector<Hazard>& hazards);

}  // namespace amaxcheck::cli
