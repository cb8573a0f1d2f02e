#include "model/scenario.h"

namespace amaxcheck {

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::fill: return "fill";
    case OpKind::local_amax: return "local_amax";
    case OpKind::fp8_cast: return "fp8_cast";
    case OpKind::copy: return "copy";
    case OpKind::scale_update: return "scale_update";
    case OpKind::all_reduce: return "all_reduce";
    case OpKind::all_gather: return "all_gather";
    case OpKind::reduce_scatter: return "reduce_scatter";
    case OpKind::broadcast: return "broadcast";
    case OpKind::event_record: return "event_record";
    case OpKind::stream_wait_event: return "stream_wait_event";
    case OpKind::work_wait: return "work_wait";
    case OpKind::stream_synchronize: return "stream_synchronize";
    case OpKind::event_synchronize: return "event_synchronize";
    case OpKind::device_synchronize: return "device_synchronize";
    case OpKind::host_signal: return "host_signal";
    case OpKind::host_wait: return "host_wait";
  }
  return "?";
}

bool is_collective(OpKind kind) {
  return kind == OpKind::all_reduce || kind == OpKind::all_gather || kind == OpKind::reduce_scatter ||
         kind == OpKind::broadcast;
}

bool is_host_blocking(OpKind kind) {
  return kind == OpKind::stream_synchronize || kind == OpKind::event_synchronize ||
         kind == OpKind::device_synchronize || kind == OpKind::host_wait;
}

bool is_host_op(OpKind kind) { return is_host_blocking(kind) || kind == OpKind::host_signal; }

bool is_device_op(OpKind kind) { return !is_host_op(kind); }

int member_index(const Communicator& comm, RankId rank) {
  for (std::size_t i = 0; i < comm.members.size(); ++i) {
    if (comm.members[i] == rank) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace amaxcheck
