#include "cuda/bootstrap_mpi.h"

// The C API only: the deprecated C++ bindings do not compile warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <climits>

#include "util/check.h"

namespace amaxcheck::gpu {

MpiExchange::MpiExchange() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    AMAX_CHECK(MPI_Init(nullptr, nullptr) == MPI_SUCCESS, "MPI_Init failed");
    owns_mpi_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiExchange::~MpiExchange() {
  if (owns_mpi_) MPI_Finalize();
}

void MpiExchange::broadcast(void* data, std::size_t bytes, int root) {
  AMAX_CHECK(bytes <= static_cast<std::size_t>(INT_MAX), "MPI broadcast larger than INT_MAX bytes");
  AMAX_CHECK(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD) == MPI_SUCCESS,
             "MPI_Bcast failed");
}

bool MpiExchange::all_agree(bool value) {
  int mine = value ? 1 : 0;
  int all = 0;
  AMAX_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD) == MPI_SUCCESS,
             "MPI_Allreduce failed");
  return all != 0;
}

}  // namespace amaxcheck::gpu
