#pragma once
/// The timeline model: what a multi-rank GPU program *is*, with no notion of how it runs.
///
/// A Scenario is a world of ranks. Each rank has host threads that run ordered programs of
/// ops, CUDA streams, events and buffers. Communicators are ordered sets of member ranks.
/// The engine (src/engine) gives these ops their meaning; protocols (src/protocols) and
/// scenario files (src/io) produce them.
///
/// Buffers are flat arrays of float. A "view" of a buffer is a Range into it, so the views of
/// a concatenated global amax buffer alias it by construction.

#include <cstdint>
#include <string>
#include <vector>

namespace amaxcheck {

using RankId = std::uint32_t;
using CommId = std::uint32_t;
using StreamId = std::uint32_t;  // index into Rank::streams
using EventId = std::uint32_t;   // index into Rank::events
using BufferId = std::uint32_t;  // index into Rank::buffers
using ThreadId = std::uint32_t;  // index into Rank::threads

enum class Dtype : std::uint8_t { f32, bf16 };
enum class ReduceOp : std::uint8_t { max, sum };
enum class Fp8Format : std::uint8_t { e4m3, e5m2 };
enum class HistoryAlgo : std::uint8_t { max, most_recent };

/// Whether collective kernels of different communicators may run at once on one device.
/// `serialized` is the conservative reading of NCCL < 2.26 (one collective kernel at a time,
/// in launch order); `concurrent` is NCCL >= 2.26 on CUDA >= 12.3.
enum class KernelConcurrency : std::uint8_t { serialized, concurrent };

/// A contiguous element range of one of a rank's buffers.
struct Range {
  BufferId buffer = 0;
  std::uint32_t offset = 0;
  std::uint32_t count = 0;

  bool overlaps(const Range& other) const {
    return buffer == other.buffer && offset < other.offset + other.count &&
           other.offset < offset + count;
  }
  friend bool operator==(const Range&, const Range&) = default;
};

enum class OpKind : std::uint8_t {
  // Device kernels (run on `stream`).
  fill,          ///< writes[0] = values (a compute step producing a tensor)
  local_amax,    ///< writes[0][0] = max |reads[0]| (NaN-ignoring, like fmaxf)
  fp8_cast,      ///< writes[0] = fp8(reads[0] * reads[1][0]) in `format`, saturating
  copy,          ///< writes[i] = reads[i] for every i (copy, concatenate and split)
  scale_update,  ///< amax_and_scale_update; see ScaleUpdateParams
  // Collectives (run on `stream`, matched per communicator by issue order).
  all_reduce,      ///< writes[0] = reduce(reads[0]) over members; in place when ranges equal
  all_gather,      ///< writes[0] (count c*m) = concat of every member's reads[0] (count c)
  reduce_scatter,  ///< writes[0] (count c) = this member's slice of reduce(reads[0]) (c*m)
  broadcast,       ///< writes[0] = root member's reads[0]
  // Stream-ordering ops (run on `stream`).
  event_record,       ///< records `event` on `stream`
  stream_wait_event,  ///< `stream` waits for the latest record of `event` at issue time
  work_wait,          ///< Work.wait(): a stream wait on a collective's completion event
  // Host-blocking ops (run on the issuing host thread).
  stream_synchronize,  ///< host blocks until `stream` has drained what was issued before
  event_synchronize,   ///< host blocks until the latest record of `event` completed
  device_synchronize,  ///< host blocks until every stream of the rank drained
  // Host-thread coordination (e.g. loss.backward() returning once the autograd thread is done).
  host_signal,  ///< increments the rank's host flag `flag`
  host_wait,    ///< host blocks until host flag `flag` was signalled at least `count` times
};

const char* to_string(OpKind kind);
bool is_collective(OpKind kind);
bool is_host_blocking(OpKind kind);  // the *_synchronize ops and host_wait
bool is_host_op(OpKind kind);        // runs on the issuing thread: host-blocking + host_signal
bool is_device_op(OpKind kind);      // everything that is queued on a stream

/// Parameters of amax_and_scale_update over `tensors` tensors with a `history_len` window.
/// reads: [0] history (history_len x tensors, row-major, row 0 = newest), [1] scale (tensors)
/// writes: [0] history, [1] scale, [2] scale_inv.
struct ScaleUpdateParams {
  std::uint32_t tensors = 0;
  std::uint32_t history_len = 1;
  HistoryAlgo algo = HistoryAlgo::max;
  int margin = 0;
  Fp8Format format = Fp8Format::e4m3;
};

struct Op {
  OpKind kind = OpKind::fill;
  std::string name;    ///< short label, e.g. "amax_allreduce_fwd"
  std::string origin;  ///< where it came from, e.g. "iter 1 / module 3 / forward copy-back"
  StreamId stream = 0;
  EventId event = 0;
  CommId comm = 0;
  ReduceOp reduce = ReduceOp::max;
  Dtype dtype = Dtype::f32;
  std::uint32_t root = 0;  ///< member index within the communicator (broadcast)
  Fp8Format format = Fp8Format::e4m3;
  ScaleUpdateParams scale;
  std::vector<Range> reads;
  std::vector<Range> writes;
  std::vector<float> values;  ///< fill only
  std::uint32_t flag = 0;     ///< host_signal / host_wait: index into Rank::flags
  std::uint32_t count = 0;    ///< host_wait: signals required
  double cost_us = 0;         ///< timed runs: kernel duration; 0 = the cost model's default
};

struct Buffer {
  std::string name;
  std::uint32_t size = 0;
  bool host = false;          ///< host (pinned) memory rather than the rank's GPU
  std::vector<float> init;    ///< empty means zeros
};

struct Stream {
  std::string name;
};

struct Event {
  std::string name;
};

struct Thread {
  std::string name;
  std::vector<Op> program;
};

struct Rank {
  std::string name;
  std::uint32_t device = 0;  ///< GPU index on its node (two members of one comm may not share)
  std::vector<Thread> threads;
  std::vector<Stream> streams;
  std::vector<Event> events;
  std::vector<Buffer> buffers;
  std::vector<std::string> flags;  ///< host flags (names), for host_signal / host_wait
};

struct Communicator {
  std::string name;
  std::vector<RankId> members;  ///< member index = position in this list
};

/// A tensor whose replicas must end bit-identical on every listed rank, and (when `expected`
/// is non-empty) equal to a sequential reference computation.
struct ReplicaCheck {
  std::string tensor;  ///< e.g. "module 2 / forward / amax_history"
  struct Replica {
    RankId rank = 0;
    Range range;
  };
  std::vector<Replica> replicas;
  std::vector<float> expected;
};

struct Scenario {
  std::string name;
  KernelConcurrency kernels = KernelConcurrency::concurrent;
  std::vector<Rank> ranks;
  std::vector<Communicator> comms;
  std::vector<ReplicaCheck> checks;
  std::string source;  ///< how to rebuild it: a protocol command line or a file path
};

/// Index of `rank` within `comm`, or -1 when it is not a member.
int member_index(const Communicator& comm, RankId rank);

/// Identifies one op of a scenario: (rank, thread, index in that thread's program).
struct OpRef {
  RankId rank = 0;
  ThreadId thread = 0;
  std::uint32_t index = 0;
  friend bool operator==(const OpRef&, const OpRef&) = default;
};

}  // namespace amaxcheck
