#include "cuda/nccl_ops.h"

#include "cuda/cuda_error.h"
#include "util/check.h"

namespace amaxcheck::gpu {

bool enqueue_collective(const CollectiveCall& call, ncclComm_t comm, cudaStream_t stream) {
  const ncclRedOp_t op = call.reduce == ReduceOp::max ? ncclMax : ncclSum;
  switch (call.kind) {
    case OpKind::all_reduce:
      return nccl_check(ncclAllReduce(call.send, call.recv, call.send_count, ncclFloat32, op, comm, stream),
                        "ncclAllReduce");
    case OpKind::all_gather:
      return nccl_check(ncclAllGather(call.send, call.recv, call.send_count, ncclFloat32, comm, stream),
                        "ncclAllGather");
    case OpKind::reduce_scatter:
      return nccl_check(ncclReduceScatter(call.send, call.recv, call.recv_count, ncclFloat32, op, comm, stream),
                        "ncclReduceScatter");
    case OpKind::broadcast:
      return nccl_check(ncclBroadcast(call.send, call.recv, call.recv_count, ncclFloat32, call.root, comm, stream),
                        "ncclBroadcast");
    default: AMAX_CHECK(false, std::string("not a collective: ") + to_string(call.kind));
  }
  return false;
}

bool enqueue_p2p(const std::vector<P2pCall>& calls, ncclComm_t comm, cudaStream_t stream) {
  const bool grouped = calls.size() > 1;
  bool in_progress = false;
  if (grouped) nccl_check(ncclGroupStart(), "ncclGroupStart");
  for (const P2pCall& call : calls) {
    if (call.kind == OpKind::send) {
      in_progress |= nccl_check(ncclSend(call.send, call.count, ncclFloat32, call.peer, comm, stream), "ncclSend");
    } else {
      in_progress |= nccl_check(ncclRecv(call.recv, call.count, ncclFloat32, call.peer, comm, stream), "ncclRecv");
    }
  }
  if (grouped) in_progress |= nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  return in_progress;
}

}  // namespace amaxcheck::gpu
