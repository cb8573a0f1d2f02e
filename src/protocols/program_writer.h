#pragma once
/// A small writer for one rank's program: named streams, events, buffers, flags and threads
/// are created on first use, and every op is appended with its name and origin.
///
/// Protocol generators read like the PyTorch code they model ("record an event on compute,
/// make the nccl stream wait on it, all-reduce") instead of index bookkeeping.

#include <string>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck {

class RankWriter {
 public:
  explicit RankWriter(Rank& rank) : rank_(&rank) {}

  ThreadId thread(const std::string& name);
  StreamId stream(const std::string& name);
  EventId event(const std::string& name);
  std::uint32_t flag(const std::string& name);
  /// Creates a buffer (its name must be new); `init` empty means zeros.
  BufferId buffer(const std::string& name, std::uint32_t size, std::vector<float> init = {});
  /// The whole of a buffer as a Range.
  Range whole(BufferId buffer) const;

  /// Appends `op` to `thread` with its name and origin.
  void emit(ThreadId thread, Op op, std::string name, std::string origin);

 private:
  Rank* rank_;
};

// Op constructors: only the fields each kind uses.
Op fill_op(StreamId stream, Range out, std::vector<float> values, double cost_us = 0);
Op local_amax_op(StreamId stream, Range in, Range out);
Op cast_op(StreamId stream, Range in, Range scale, Range out, Fp8Format format);
Op copy_op(StreamId stream, Range from, Range to, double cost_us = 0);
Op scale_update_op(StreamId stream, const ScaleUpdateParams& params, Range history, Range scale, Range scale_inv);
Op collective_op(OpKind kind, StreamId stream, CommId comm, ReduceOp reduce, Range in, Range out);
/// ncclSend of `in` to member `peer` of `comm` / ncclRecv into `out` from member `peer`.
Op send_op(StreamId stream, CommId comm, std::uint32_t peer, Range in);
Op recv_op(StreamId stream, CommId comm, std::uint32_t peer, Range out);
Op event_record_op(StreamId stream, EventId event);
Op stream_wait_event_op(StreamId stream, EventId event);
Op work_wait_op(StreamId stream, EventId event);
Op device_synchronize_op();
Op host_signal_op(std::uint32_t flag);
Op host_wait_op(std::uint32_t flag, std::uint32_t count);

}  // namespace amaxcheck
