#pragma once
/// Which GPU each scenario rank runs on, and whether the scenario fits the machine at all.
/// Pure C++: the device count and NCCL version are inputs, so every branch is tested on a CPU.
///
/// NCCL before 2.30 refuses two ranks of one communicator on one GPU (and 2.30+ allows it only
/// with NCCL_MULTI_RANK_GPU_ENABLE=1). When a single process has fewer GPUs than ranks and
/// sharing is not allowed, the scenario does not fit as written. What still makes sense then
/// is the same program with every communicator cut into 1-rank communicators
/// (split_communicators_per_rank, model/split_communicators.h): collectives become local copies, but the stream and event
/// races stay real. The caller decides whether to run that variant, and must then simulate
/// the *split* scenario too, so both backends run the same program.

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/launch_env.h"
#include "model/scenario.h"

namespace amaxcheck::gpu {

enum class PlacementMode : std::uint8_t {
  one_gpu_per_rank,       ///< every local rank has its own device
  several_ranks_per_gpu,  ///< NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1
  shared_gpus_no_peers,   ///< ranks share devices, but no communicator has two ranks on one
  does_not_fit,           ///< needs split_communicators_per_rank (or more GPUs)
};

}  // namespace amaxcheck::gpu

namespace amaxcheck {
/// How a report describes a placement.
template <>
struct EnumNames<gpu::PlacementMode> {
  static constexpr std::array table{
      EnumName<gpu::PlacementMode>{gpu::PlacementMode::one_gpu_per_rank, "one GPU per rank"},
      EnumName<gpu::PlacementMode>{gpu::PlacementMode::several_ranks_per_gpu, "several ranks per GPU"},
      EnumName<gpu::PlacementMode>{gpu::PlacementMode::shared_gpus_no_peers, "shared GPUs, no peers on one GPU"},
      EnumName<gpu::PlacementMode>{gpu::PlacementMode::does_not_fit, "does not fit"}};
};
}  // namespace amaxcheck

namespace amaxcheck::gpu {

const char* to_string(PlacementMode mode);

/// NCCL_VERSION(2, 30, 0): the first run-time library that may put several ranks of one
/// communicator on one GPU. Spelled out because this file sees no nccl.h; communicators.cpp
/// checks that it equals compat::multi_rank_gpu_min_version.
inline constexpr int several_ranks_per_gpu_min_nccl = 23000;

struct PlacementInput {
  LaunchEnv launch;
  int device_count = 0;
  int nccl_version = 0;         ///< run-time ncclGetVersion code
  bool multi_rank_env = false;  ///< NCCL_MULTI_RANK_GPU_ENABLE=1 is set (compat::multi_rank_gpu_enabled)
};

struct Placement {
  PlacementMode mode = PlacementMode::does_not_fit;
  std::vector<std::uint32_t> local_ranks;  ///< scenario ranks this process runs
  std::vector<int> device_of_rank;         ///< per scenario rank; -1 for other processes' ranks
  std::string note;                        ///< the decision and its reason, one line

  bool fits() const { return mode != PlacementMode::does_not_fit; }
};

/// Decides the placement. When the node has fewer GPUs than ranks, several ranks of one
/// communicator share a GPU exactly when nccl_version >= several_ranks_per_gpu_min_nccl and
/// multi_rank_env; otherwise a scenario that would put two members of a communicator on one
/// GPU does not fit, and the note says which of the two is missing. Throws InputError when the
/// process count does not divide the rank count, or when there is no device at all.
Placement plan_placement(const Scenario& scenario, const PlacementInput& input);

}  // namespace amaxcheck::gpu
