// The unique-id exchange under a real `mpirun -np 2`, without a GPU (CPU-only bootstrap mode).
//
// Run with no arguments it re-launches itself under mpirun and returns its status; it exits 77
// (meson's "skipped") when mpirun is not on PATH. Each child checks that the launcher's
// variables agree with MPI, that the ids made by process 0 (ncclGetUniqueId when built with
// NCCL, which needs no device; random bytes otherwise) reach process 1 intact, and that every
// process owns the scenario ranks the contiguous split gives it.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>

#include "cuda/bootstrap_mpi.h"
#include "cuda/launch_env.h"

#if defined(AMAXCHECK_HAVE_CUDA)
#include <nccl.h>
#endif

namespace {

using namespace amaxcheck::gpu;

UniqueIdBytes make_id() {
  UniqueIdBytes id{};
#if defined(AMAXCHECK_HAVE_CUDA)
  ncclUniqueId nccl_id;
  if (ncclGetUniqueId(&nccl_id) == ncclSuccess) {
    std::memcpy(id.data(), nccl_id.internal, unique_id_bytes);
    return id;
  }
#endif
  std::random_device device;  // not a schedule decision: only needs to be unguessable
  for (char& c : id) c = static_cast<char>(device());
  return id;
}

int child() {
  MpiExchange mpi;
  const LaunchEnv env = launch_env_from(process_env());
  bool ok = env.world_rank == mpi.rank() && env.world_size == mpi.size() && env.launcher == "openmpi";
  if (!ok) std::fprintf(stderr, "rank %d: launcher says %d of %d (%s)\n", mpi.rank(), env.world_rank, env.world_size,
                        env.launcher.c_str());
  const auto ids = share_unique_ids(mpi, 3, make_id);
  // Process 0 sends its copy again; everyone compares with what the exchange delivered.
  std::vector<char> root(ids.size() * unique_id_bytes);
  for (std::size_t i = 0; i < ids.size(); ++i) std::memcpy(root.data() + i * unique_id_bytes, ids[i].data(), unique_id_bytes);
  std::vector<char> echo = root;
  mpi.broadcast(echo.data(), echo.size(), 0);
  const bool same = echo == root;
  const bool distinct = ids[0] != ids[1] && ids[1] != ids[2];
  const auto mine = ranks_of_process(4, env);
  const bool owns = mine.size() == 2 && mine[0] == static_cast<std::uint32_t>(2 * env.world_rank);
  if (!same) std::fprintf(stderr, "rank %d: ids differ from process 0's\n", mpi.rank());
  if (!distinct) std::fprintf(stderr, "rank %d: ids are not distinct\n", mpi.rank());
  if (!owns) std::fprintf(stderr, "rank %d: wrong scenario ranks\n", mpi.rank());
  const bool all = mpi.all_agree(ok && same && distinct && owns);
  if (mpi.rank() == 0) std::printf("mpi bootstrap: %d processes, ids exchanged: %s\n", mpi.size(), all ? "ok" : "FAILED");
  return all ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) return child();
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    std::puts("SKIP: mpirun is not on PATH");
    return 77;
  }
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  const std::string command =
      fmt::format("mpirun --allow-run-as-root --oversubscribe -np 2 '{}' --child", std::string(self));
  const int status = std::system(command.c_str());
  return status == 0 ? 0 : 1;
}
