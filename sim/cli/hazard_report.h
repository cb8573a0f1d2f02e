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

/// Hazards grouped for reading: the same kind between the same ops (by name) on other ranks
/// or iterations is one group. Each group prints its first hazard in full and a count.
std::string format_hazard_groups(const std::vector<Hazard>& hazards, const std::string& replay_command);

/// "data_race, deadlock": the distinct kinds, in first-seen order.
std::string hazard_kinds(const std::vector<Hazard>& hazards);

}  // namespace amaxcheck::cli
