#include "cuda/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/check.h"

namespace amaxcheck::gpu {
namespace {

/// True when some communicator has two members on one device under `device_of_rank`.
bool peers_share_a_device(const Scenario& scenario, const std::vector<int>& device_of_rank) {
  for (const Communicator& comm : scenario.comms) {
    std::map<int, RankId> seen;
    for (RankId r : comm.members) {
      const int device = device_of_rank.at(r);
      if (device < 0) continue;
      if (!seen.emplace(device, r).second) return true;
    }
  }
  return false;
}

std::string version_text(int code) {
  if (code <= 0) return "unknown";
  return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
}

/// Why two ranks of one communicator may not share a GPU: the library is too old, or it is
/// new enough and the switch is off (then setting it is all that is missing).
std::string sharing_refusal(int nccl_version) {
  if (nccl_version >= several_ranks_per_gpu_min_nccl) {
    return fmt::format("NCCL {} allows that only with NCCL_MULTI_RANK_GPU_ENABLE=1 (experimental), which is not set",
                       version_text(nccl_version));
  }
  return fmt::format("NCCL {} does not allow that (needs NCCL >= 2.30 and NCCL_MULTI_RANK_GPU_ENABLE=1)",
                     version_text(nccl_version));
}

}  // namespace

const char* to_string(PlacementMode mode) { return enum_name(mode); }

Placement plan_placement(const Scenario& scenario, const PlacementInput& input) {
  if (input.device_count <= 0) throw InputError("no usable CUDA device on this node");
  const auto total = static_cast<std::uint32_t>(scenario.ranks.size());
  Placement out;
  out.local_ranks = ranks_of_process(total, input.launch);
  const auto per_process = static_cast<std::uint32_t>(out.local_ranks.size());
  out.device_of_rank.assign(total, -1);

  // Node-wide, so that every process of the node takes the same decision (one that fits while
  // another does not would leave the first waiting for NCCL peers that never come).
  const bool enough = static_cast<std::uint64_t>(std::max(input.launch.local_size, 1)) * per_process <=
                      static_cast<std::uint64_t>(input.device_count);
  for (std::uint32_t slot = 0; slot < per_process; ++slot) {
    out.device_of_rank[out.local_ranks[slot]] =
        device_for_slot(input.launch, per_process, slot, input.device_count, true);
  }
  const std::string where = fmt::format("{} rank(s) in this process, {} GPU(s) visible", per_process,
                                        input.device_count);
  if (enough) {
    out.mode = PlacementMode::one_gpu_per_rank;
    out.note = where + ": one GPU per rank";
    return out;
  }
  const bool multi_rank_ok = input.nccl_version >= several_ranks_per_gpu_min_nccl && input.multi_rank_env;
  if (multi_rank_ok) {
    out.mode = PlacementMode::several_ranks_per_gpu;
    out.note = where + fmt::format(": several ranks per GPU (NCCL {} with NCCL_MULTI_RANK_GPU_ENABLE=1)",
                                   version_text(input.nccl_version));
    return out;
  }
  // A process sees only its own ranks' devices: in a multi-process launch it cannot tell whether
  // another process's rank on the same GPU shares a communicator with one of ours, so it does
  // not guess.
  if (!input.launch.multi_process() && !peers_share_a_device(scenario, out.device_of_rank)) {
    out.mode = PlacementMode::shared_gpus_no_peers;
    out.note = where + ": ranks share GPUs, but no communicator has two members on one GPU";
    return out;
  }
  // Without a communicator of two or more members, no two ranks can ever be NCCL peers, so
  // sharing GPUs is safe whatever the other processes run (e.g. --one-rank-comms).
  const bool no_peers_anywhere = std::all_of(scenario.comms.begin(), scenario.comms.end(),
                                             [](const Communicator& c) { return c.members.size() <= 1; });
  if (no_peers_anywhere) {
    out.mode = PlacementMode::shared_gpus_no_peers;
    out.note = where + ": ranks share GPUs, but every communicator has a single member";
    return out;
  }
  out.mode = PlacementMode::does_not_fit;
  const std::string why_not = sharing_refusal(input.nccl_version);
  if (input.launch.multi_process()) {
    out.note = where + fmt::format(": the {} process(es) on this node need {} GPUs without sharing, and {}; use "
                                   "more GPUs or fewer processes per node",
                                   input.launch.local_size, input.launch.local_size * per_process, why_not);
    return out;
  }
  out.note = where + fmt::format(
                         ": two ranks of one communicator would share a GPU, and {}; run the "
                         "1-rank-communicator variant (collectives become local; stream/event races "
                         "stay real) or use more GPUs",
                         why_not);
  return out;
}

}  // namespace amaxcheck::gpu
