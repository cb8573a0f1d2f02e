#pragma once
/// IdExchange over MPI_COMM_WORLD, for launches by mpirun / srun (one process per GPU).
/// Lives in its own library (amaxcheck_gpu_mpi) so that only MPI programs link libmpi.

#include "cuda/bootstrap.h"

namespace amaxcheck::gpu {

class MpiExchange final : public IdExchange {
 public:
  /// Initializes MPI unless the program already did; finalizes it on destruction only then.
  MpiExchange();
  ~MpiExchange() override;
  MpiExchange(const MpiExchange&) = delete;
  MpiExchange& operator=(const MpiExchange&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void broadcast(void* data, std::size_t bytes, int root) override;
  /// Logical AND of `value` over every process (for tests and data checks).
  bool all_agree(bool value);

 private:
  bool owns_mpi_ = false;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace amaxcheck::gpu
