#pragma once
/// Op kinds: the one table that says, per kind, what an op of that kind has and how it runs.
///
/// Everything that needs a per-kind rule asks this table instead of listing kinds: the
/// scenario reader (which fields are required), writer (which are always written) and
/// validator (stream / event / flag indices, range arity), the engine (host or stream,
/// collective agreement), the cost model, the GPU replayer and its per-rank resources, the
/// scheduler's step estimate and the property-test models. What an op *computes* stays with
/// the engine (src/engine/op_effects.cpp).
///
/// Adding an op kind: an enumerator below, its row in `op_kind_table` (the build fails until
/// the row is there, in order), then its value semantics in op_effects.cpp (a kernel) or the
/// engine's rendezvous (a collective), and its CUDA call in src/cuda/replayer.cpp.
///
/// Point-to-point ops (send, recv) follow ncclSend / ncclRecv: the k-th send from member a to
/// member b of a communicator matches the k-th recv at b from a; a pair completes once both
/// sides have started (neither completes alone); they take the communicator's host issue order
/// like collectives do; consecutive send / recv ops of one thread with the same nonzero
/// `group` form one ncclGroupStart / ncclGroupEnd launch, which starts as a whole.

#include <array>
#include <cstdint>

#include "util/enum_names.h"

namespace amaxcheck {

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
  // Point-to-point (run on `stream`, matched per (sender, receiver) pair by issue order).
  send,  ///< reads[0] goes to member `peer` of `comm` (ncclSend)
  recv,  ///< writes[0] = the matching send's reads[0] from member `peer` (ncclRecv)
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

/// Where an op runs once issued.
enum class OpPlace : std::uint8_t {
  stream,      ///< queued on `stream`; a stream runs it (kernels, event ops)
  collective,  ///< queued on `stream`; its stream joins a rendezvous of the communicator's members
  p2p,         ///< queued on `stream`; its stream joins a pair rendezvous with one peer member
  host,        ///< runs on the issuing host thread
};

/// The Op fields a kind uses, besides those every op has (kind, name, origin, dtype, cost_us).
/// A scenario file must give them (except `reduce`, see below); the writer always writes them.
enum OpField : std::uint16_t {
  field_stream = 1 << 0,
  field_event = 1 << 1,
  field_comm = 1 << 2,
  field_reduce = 1 << 3,  ///< the reduction (all_reduce, reduce_scatter)
  field_root = 1 << 4,    ///< broadcast's root member
  field_format = 1 << 5,
  field_scale = 1 << 6,
  field_reads = 1 << 7,
  field_writes = 1 << 8,
  field_values = 1 << 9,
  field_flag = 1 << 10,
  field_count = 1 << 11,
  field_peer = 1 << 12,  ///< send / recv: the other side's member index within `comm`
};

/// A range count of `any_ranges`: the kind takes any number of ranges (copy: as many writes as reads).
inline constexpr std::int8_t any_ranges = -1;

struct OpKindInfo {
  OpKind value;
  const char* name;
  OpPlace place;
  std::uint16_t fields;    ///< OpField bits
  std::int8_t reads;       ///< read ranges the kind takes, or any_ranges
  std::int8_t writes;      ///< write ranges the kind takes, or any_ranges
  bool host_blocking;      ///< a host op that waits for a condition (the *_synchronize ops, host_wait)
  /// Engine actions one op of this kind takes on its rank: its issue, plus the execute or join
  /// of a stream op. A collective also takes one `complete`, shared by all its members.
  std::uint8_t rank_actions;
};

namespace op_kind_detail {
constexpr std::uint16_t kernel = field_stream | field_reads | field_writes;
constexpr std::uint16_t collective = field_stream | field_comm | field_reads | field_writes;
constexpr std::uint16_t p2p = field_stream | field_comm | field_peer;
}  // namespace op_kind_detail

// clang-format off
inline constexpr std::array<OpKindInfo, 19> op_kind_table{{
  //  kind                          name                  place                 fields                                                  reads writes blocks actions
  {OpKind::fill,               "fill",               OpPlace::stream,     field_stream | field_writes | field_values,               0, 1,  false, 2},
  {OpKind::local_amax,         "local_amax",         OpPlace::stream,     op_kind_detail::kernel,                                   1, 1,  false, 2},
  {OpKind::fp8_cast,           "fp8_cast",           OpPlace::stream,     op_kind_detail::kernel | field_format,                    2, 1,  false, 2},
  {OpKind::copy,               "copy",               OpPlace::stream,     op_kind_detail::kernel,                                   any_ranges, any_ranges, false, 2},
  {OpKind::scale_update,       "scale_update",       OpPlace::stream,     op_kind_detail::kernel | field_scale,                     2, 3,  false, 2},
  {OpKind::all_reduce,         "all_reduce",         OpPlace::collective, op_kind_detail::collective | field_reduce,                1, 1,  false, 2},
  {OpKind::all_gather,         "all_gather",         OpPlace::collective, op_kind_detail::collective,                               1, 1,  false, 2},
  {OpKind::reduce_scatter,     "reduce_scatter",     OpPlace::collective, op_kind_detail::collective | field_reduce,                1, 1,  false, 2},
  {OpKind::broadcast,          "broadcast",          OpPlace::collective, op_kind_detail::collective | field_root,                  1, 1,  false, 2},
  {OpKind::send,               "send",               OpPlace::p2p,        op_kind_detail::p2p | field_reads,                        1, 0,  false, 2},
  {OpKind::recv,               "recv",               OpPlace::p2p,        op_kind_detail::p2p | field_writes,                       0, 1,  false, 2},
  {OpKind::event_record,       "event_record",       OpPlace::stream,     field_stream | field_event,                               0, 0,  false, 2},
  {OpKind::stream_wait_event,  "stream_wait_event",  OpPlace::stream,     field_stream | field_event,                               0, 0,  false, 2},
  {OpKind::work_wait,          "work_wait",          OpPlace::stream,     field_stream | field_event,                               0, 0,  false, 2},
  {OpKind::stream_synchronize, "stream_synchronize", OpPlace::host,       field_stream,                                             0, 0,  true,  1},
  {OpKind::event_synchronize,  "event_synchronize",  OpPlace::host,       field_event,                                              0, 0,  true,  1},
  {OpKind::device_synchronize, "device_synchronize", OpPlace::host,       0,                                                        0, 0,  true,  1},
  {OpKind::host_signal,        "host_signal",        OpPlace::host,       field_flag,                                               0, 0,  false, 1},
  {OpKind::host_wait,          "host_wait",          OpPlace::host,       field_flag | field_count,                                 0, 0,  true,  1},
}};
// clang-format on

template <>
struct EnumNames<OpKind> {
  static constexpr const auto& table = op_kind_table;
};

/// The row of `kind`.
constexpr const OpKindInfo& op_kind_info(OpKind kind) {
  static_assert(enum_names_in_order<OpKind>(), "op_kind_table must list the kinds in declaration order");
  return op_kind_table[static_cast<std::size_t>(kind)];
}

inline const char* to_string(OpKind kind) { return enum_name(kind); }
constexpr bool has_field(OpKind kind, OpField field) { return (op_kind_info(kind).fields & field) != 0; }

namespace op_kind_detail {
/// A bit per kind whose row has place `place`, worked out from the table when compiling: the
/// place predicates below test one bit instead of loading a row (the engine asks a few of them
/// every step).
constexpr std::uint32_t kinds_at(OpPlace place) {
  static_assert(op_kind_table.size() <= 32);
  std::uint32_t kinds = 0;
  for (const OpKindInfo& info : op_kind_table) {
    if (info.place == place) kinds |= std::uint32_t{1} << static_cast<unsigned>(info.value);
  }
  return kinds;
}
constexpr bool is_in(std::uint32_t kinds, OpKind kind) { return ((kinds >> static_cast<unsigned>(kind)) & 1u) != 0; }
inline constexpr std::uint32_t collective_kinds = kinds_at(OpPlace::collective);
inline constexpr std::uint32_t p2p_kinds = kinds_at(OpPlace::p2p);
inline constexpr std::uint32_t host_kinds = kinds_at(OpPlace::host);
}  // namespace op_kind_detail

constexpr bool is_collective(OpKind kind) { return op_kind_detail::is_in(op_kind_detail::collective_kinds, kind); }
/// send / recv: matched per (sender, receiver) pair, not per communicator.
constexpr bool is_p2p(OpKind kind) { return op_kind_detail::is_in(op_kind_detail::p2p_kinds, kind); }
/// Runs on a communicator (a collective or a point-to-point op): NCCL orders these per
/// communicator in host issue order, and a stream holding one waits for its rendezvous.
constexpr bool is_comm_op(OpKind kind) {
  return op_kind_detail::is_in(op_kind_detail::collective_kinds | op_kind_detail::p2p_kinds, kind);
}
/// Runs on the issuing thread: the host-blocking ops and host_signal.
constexpr bool is_host_op(OpKind kind) { return op_kind_detail::is_in(op_kind_detail::host_kinds, kind); }
/// Queued on a stream: kernels, collectives and event ops.
constexpr bool is_device_op(OpKind kind) { return !is_host_op(kind); }
/// The *_synchronize ops and host_wait.
constexpr bool is_host_blocking(OpKind kind) { return op_kind_info(kind).host_blocking; }
/// Refers to one of the rank's events (records, waits on or synchronizes with it).
constexpr bool has_event(OpKind kind) { return has_field(kind, field_event); }
/// Its reduction matters (all_reduce, reduce_scatter).
constexpr bool has_reduce_op(OpKind kind) { return has_field(kind, field_reduce); }
/// Has a root member (broadcast).
constexpr bool has_root(OpKind kind) { return has_field(kind, field_root); }
/// A stream op that reads or writes buffers (a kernel or a collective), as opposed to an event op.
constexpr bool moves_data(OpKind kind) {
  return is_device_op(kind) && (has_field(kind, field_writes) || has_field(kind, field_reads));
}

struct Op;

/// Why two collectives matched on one communicator (same sequence number) cannot form one
/// collective, in Flight Recorder's terms: "type mismatch", "size mismatch" (input or output
/// count), "dtype mismatch", "reduce op mismatch" (kinds with a reduce op), "root mismatch"
/// (broadcast); nullptr when they agree. The engine's rendezvous and the collective detector
/// both use it, so what cannot complete is exactly what is reported.
const char* collective_disagreement(const Op& a, const Op& b);
bool collectives_agree(const Op& a, const Op& b);
/// Why a matched send and recv cannot form one transfer: "size mismatch" (the send's count is
/// not the recv's), "dtype mismatch"; nullptr when they agree.
const char* p2p_disagreement(const Op& send, const Op& recv);
/// is_discarded_collective and completes_at_issue (zero-element collectives, which NCCL
/// discards at the call) are in scenario.h, beside Op: inline, since every issue asks.

}  // namespace amaxcheck
