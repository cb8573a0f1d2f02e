#include "cuda/launch_env.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "util/check.h"

namespace amaxcheck::gpu {
namespace {

struct LauncherVars {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;  ///< may be unset; then derived as 1 + local_rank at least
};

// Ordered: OpenMPI sets its own variables even when started by srun, and those are the ones
// that match MPI_COMM_WORLD.
constexpr LauncherVars kLaunchers[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
    {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
};

int parse_count(const EnvLookup& env, const char* name, int fallback) {
  const auto value = env(name);
  if (!value) return fallback;
  int out = 0;
  const char* first = value->data();
  const char* last = first + value->size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  if (ec != std::errc() || ptr != last || out < 0) {
    throw InputError(fmt::format("environment variable {}='{}': expected a non-negative integer", name, *value));
  }
  return out;
}

}  // namespace

EnvLookup process_env() {
  return [](std::string_view name) -> std::optional<std::string> {
    const std::string key(name);
    const char* value = std::getenv(key.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

LaunchEnv launch_env_from(const EnvLookup& env) {
  for (const LauncherVars& vars : kLaunchers) {
    if (!env(vars.rank)) continue;
    LaunchEnv out;
    out.launcher = vars.launcher;
    out.world_rank = parse_count(env, vars.rank, 0);
    out.world_size = parse_count(env, vars.size, 1);
    out.local_rank = parse_count(env, vars.local_rank, 0);
    out.local_size = parse_count(env, vars.local_size, out.local_rank + 1);
    if (out.world_size == 0 || out.world_rank >= out.world_size) {
      throw InputError(fmt::format("environment: {}={} is not below {}={}", vars.rank, out.world_rank,
                                   vars.size, out.world_size));
    }
    if (out.local_size == 0 || out.local_rank >= out.local_size) {
      throw InputError(fmt::format("environment: {}={} is not below {}={}", vars.local_rank,
                                   out.local_rank, vars.local_size, out.local_size));
    }
    return out;
  }
  return LaunchEnv{};
}

std::vector<std::uint32_t> ranks_of_process(std::uint32_t scenario_ranks, const LaunchEnv& launch) {
  const auto processes = static_cast<std::uint32_t>(launch.world_size);
  if (processes == 0 || scenario_ranks % processes != 0) {
    throw InputError(fmt::format("the scenario has {} ranks, which is not a multiple of the {} launched "
                                 "processes (ranks = processes x ranks per process)",
                                 scenario_ranks, processes));
  }
  const std::uint32_t per = scenario_ranks / processes;
  std::vector<std::uint32_t> out;
  for (std::uint32_t k = 0; k < per; ++k) out.push_back(static_cast<std::uint32_t>(launch.world_rank) * per + k);
  return out;
}

int process_of_rank(std::uint32_t rank, std::uint32_t scenario_ranks, int world_size) {
  AMAX_CHECK(world_size > 0 && scenario_ranks % static_cast<std::uint32_t>(world_size) == 0,
             "process_of_rank needs a rank count that splits evenly");
  return static_cast<int>(rank / (scenario_ranks / static_cast<std::uint32_t>(world_size)));
}

int device_for_slot(const LaunchEnv& launch, std::uint32_t ranks_per_process, std::uint32_t slot,
                    int device_count, bool allow_sharing) {
  if (device_count <= 0) return -1;
  const long wanted = static_cast<long>(launch.local_rank) * ranks_per_process + slot;
  if (wanted < device_count) return static_cast<int>(wanted);
  return allow_sharing ? static_cast<int>(wanted % device_count) : -1;
}

}  // namespace amaxcheck::gpu
