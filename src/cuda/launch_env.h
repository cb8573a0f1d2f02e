#pragma once
/// Where this process sits in a GPU launch: its rank among the processes, its rank on the node,
/// and which CUDA device each scenario rank it owns runs on. Pure C++, tested without a GPU.
///
/// Ranks = processes x ranks per process, as in nccl-tests:
/// - one process (no launcher variables): every scenario rank lives in this process, one host
///   thread per local GPU sets the communicators up;
/// - mpirun / srun, one process per GPU: the launcher's variables say who we are; NCCL's
///   unique ids travel over MPI (bootstrap.h).
///
/// Launcher variables, first match wins:
/// - OpenMPI: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK,
///   OMPI_COMM_WORLD_LOCAL_SIZE;
/// - Slurm: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (SLURM_NTASKS_PER_NODE when set);
/// - MPICH / Hydra: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace amaxcheck::gpu {

/// Reads one environment variable; std::nullopt when it is unset. Tests pass a map instead of
/// the real environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

/// The process environment.
EnvLookup process_env();

struct LaunchEnv {
  int world_rank = 0;
  int world_size = 1;
  int local_rank = 0;  ///< rank among the processes on this node
  int local_size = 1;
  std::string launcher = "none";  ///< "none", "openmpi", "slurm" or "mpich"

  bool multi_process() const { return world_size > 1; }
};

/// Reads the launcher's variables. Throws InputError naming the variable when a value is not a
/// non-negative integer, or when a rank is not below its size.
LaunchEnv launch_env_from(const EnvLookup& env);

/// Which scenario ranks a process owns: contiguous blocks of `ranks / world_size` ranks, so
/// that ranks 0..k-1 are process 0's (nccl-tests' "processes x GPUs per process").
/// Throws InputError when the scenario's rank count is not a multiple of the process count.
std::vector<std::uint32_t> ranks_of_process(std::uint32_t scenario_ranks, const LaunchEnv& launch);

/// The process that owns `rank` under the same contiguous split.
int process_of_rank(std::uint32_t rank, std::uint32_t scenario_ranks, int world_size);

/// The CUDA device for the `slot`-th rank owned by this process: processes on one node take
/// consecutive blocks of devices (local_rank * ranks_per_process + slot). Wraps around the
/// visible devices only when `allow_sharing` (several ranks per GPU); otherwise returns -1
/// when the node does not have enough devices.
int device_for_slot(const LaunchEnv& launch, std::uint32_t ranks_per_process, std::uint32_t slot,
                    int device_count, bool allow_sharing);

}  // namespace amaxcheck::gpu
