#pragma once
/// Getting NCCL's unique ids to every process, over whatever the user already launched with.
///
/// One process (the root) makes an id per communicator and broadcasts the bytes. In a single
/// process there is nothing to send. Under mpirun / srun the bytes travel with MPI_Bcast
/// (bootstrap_mpi.h, a separate library so that nothing else links MPI: the H200 machines
/// this runs on may have no libmpi). There is no home-made launcher.
///
/// The exchange only moves bytes, so it is tested on a CPU under `mpirun -np 2` with ids that
/// are made without a GPU (ncclGetUniqueId needs no device, or random bytes without NCCL).

#include <array>
#include <cstddef>
#include <functional>
#include <vector>

namespace amaxcheck::gpu {

/// NCCL_UNIQUE_ID_BYTES; the CUDA code static_asserts that it matches nccl.h.
inline constexpr std::size_t unique_id_bytes = 128;
using UniqueIdBytes = std::array<char, unique_id_bytes>;

/// The processes of one launch, as far as NCCL's bootstrap needs them.
class IdExchange {
 public:
  virtual ~IdExchange() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Every process passes a buffer of `bytes` bytes; afterwards all hold the root's contents.
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
};

/// The exchange of a process that runs every rank itself.
class SingleProcessExchange final : public IdExchange {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void broadcast(void*, std::size_t, int) override {}
};

/// Process 0 calls `make_id` `count` times; every process returns the same `count` ids.
std::vector<UniqueIdBytes> share_unique_ids(IdExchange& exchange, std::size_t count,
                                            const std::function<UniqueIdBytes()>& make_id);

/// Every process's `ok`, in process order (each process broadcasts its own in turn). A process
/// that cannot run says so here, before the others wait for it in a collective that it will
/// never join.
std::vector<bool> share_flags(IdExchange& exchange, bool ok);

}  // namespace amaxcheck::gpu
