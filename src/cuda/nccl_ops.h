#pragma once
/// The scenario's collectives as NCCL calls. Scenario buffers hold floats whatever the op's
/// dtype says, so every collective runs as ncclFloat32 (the dtype still takes part in the
/// simulator's agreement check); the counts are the scenario's.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck::gpu {

struct CollectiveCall {
  OpKind kind = OpKind::all_reduce;
  const float* send = nullptr;
  float* recv = nullptr;
  std::size_t send_count = 0;  ///< all_reduce / all_gather: elements per member
  std::size_t recv_count = 0;  ///< reduce_scatter: elements per member; broadcast: elements
  ReduceOp reduce = ReduceOp::max;
  int root = 0;
};

/// One ncclSend (`send`) or ncclRecv (`recv`) with member `peer`.
struct P2pCall {
  OpKind kind = OpKind::send;
  const float* send = nullptr;
  float* recv = nullptr;
  std::size_t count = 0;
  int peer = 0;
};

/// Queues the calls on `stream`, inside ncclGroupStart / ncclGroupEnd when there are several.
/// Returns true when the non-blocking communicator answered ncclInProgress.
bool enqueue_p2p(const std::vector<P2pCall>& calls, ncclComm_t comm, cudaStream_t stream);

/// Queues the call on `stream`. Returns true when the non-blocking communicator answered
/// ncclInProgress (the caller must see it finish before the next call on that communicator).
bool enqueue_collective(const CollectiveCall& call, ncclComm_t comm, cudaStream_t stream);

}  // namespace amaxcheck::gpu
