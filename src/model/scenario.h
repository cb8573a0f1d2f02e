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

#include "model/op_kind.h"
#include "util/enum_names.h"

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

template <>
struct EnumNames<Dtype> {
  static constexpr std::array table{EnumName<Dtype>{Dtype::f32, "f32"}, EnumName<Dtype>{Dtype::bf16, "bf16"}};
};
template <>
struct EnumNames<ReduceOp> {
  static constexpr std::array table{EnumName<ReduceOp>{ReduceOp::max, "max"}, EnumName<ReduceOp>{ReduceOp::sum, "sum"}};
};
template <>
struct EnumNames<Fp8Format> {
  static constexpr std::array table{EnumName<Fp8Format>{Fp8Format::e4m3, "e4m3"},
                                    EnumName<Fp8Format>{Fp8Format::e5m2, "e5m2"}};
};
template <>
struct EnumNames<HistoryAlgo> {
  static constexpr std::array table{EnumName<HistoryAlgo>{HistoryAlgo::max, "max"},
                                    EnumName<HistoryAlgo>{HistoryAlgo::most_recent, "most_recent"}};
};
template <>
struct EnumNames<KernelConcurrency> {
  static constexpr std::array table{EnumName<KernelConcurrency>{KernelConcurrency::serialized, "serialized"},
                                    EnumName<KernelConcurrency>{KernelConcurrency::concurrent, "concurrent"}};
};

/// A contiguous element range of one of a rank's buffers.
struct Range {
  BufferId buffer = 0;
  std::uint32_t offset = 0;
  std::uint32_t count = 0;

  /// Shares at least one element with `other` (an empty range overlaps nothing).
  bool overlaps(const Range& other) const {
    return buffer == other.buffer && count > 0 && other.count > 0 && offset < other.offset + other.count &&
           other.offset < offset + count;
  }
  friend bool operator==(const Range&, const Range&) = default;
};

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
  std::uint32_t peer = 0;  ///< send / recv: the other side's member index within the communicator
  /// send / recv: consecutive ops of one thread with the same nonzero group are one
  /// ncclGroupStart / ncclGroupEnd launch (they start together); 0 = not grouped.
  std::uint32_t group = 0;
  Fp8Format format = Fp8Format::e4m3;
  ScaleUpdateParams scale;
  std::vector<Range> reads;
  std::vector<Range> writes;
  std::vector<float> values;  ///< fill only
  std::uint32_t flag = 0;     ///< host_signal / host_wait: index into Rank::flags
  std::uint32_t count = 0;    ///< host_wait: signals required
  double cost_us = 0;         ///< timed runs: kernel duration; 0 = the cost model's default
  /// Timed runs: what the op stands for beyond the few values the simulator carries. A
  /// collective's bytes per member (0 = its largest buffer's), a kernel's floating-point
  /// operations (0 = none given). They change no value, hazard or schedule of an untimed run.
  std::uint64_t cost_bytes = 0;
  std::uint64_t cost_flops = 0;
};

/// A collective of zero elements (its output range is empty). NCCL discards it where it is
/// called (enqueue.cc, taskAppend: "Empty collectives can be discarded"): it is matched with
/// nothing, takes no place in its communicator's order and puts nothing on its stream, so it
/// completes at issue, like a host op that does nothing. A zero-size send or recv is not
/// discarded: NCCL still queues it for its peer, so it is matched and completes as a pair.
inline bool is_discarded_collective(const Op& op) {
  return is_collective(op.kind) && !op.writes.empty() && op.writes.front().count == 0;
}
/// Runs entirely at its issue: a host op, or a discarded collective.
inline bool completes_at_issue(const Op& op) { return is_host_op(op.kind) || is_discarded_collective(op); }

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
  /// `expected` is the sequential reference's answer (io/scenario_reference.h), computed when
  /// the scenario was read; a scenario file says `"expected": "reference"` for it.
  bool expected_reference = false;
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
/// Every op of every thread of every rank: the size of a per-op table, and a shrink's measure.
std::size_t op_count(const Scenario& scenario);

/// Identifies one op of a scenario: (rank, thread, index in that thread's program).
struct OpRef {
  RankId rank = 0;
  ThreadId thread = 0;
  std::uint32_t index = 0;
  friend bool operator==(const OpRef&, const OpRef&) = default;
};

}  // namespace amaxcheck
