#pragma once
/// A simple sequential model of stream, event and communicator semantics (the `Model` of the
/// model-based engine test), written from shared/DESIGN.md section 3 without the engine's code:
/// no vector clocks, no observers, just queues, counters and values.
///
/// - issue: a host thread's next op. Host-blocking ops are enabled only when their condition
///   holds (stream empty, event's latest record done, device idle, flag signalled enough);
///   device ops are appended to their stream. A wait captures the event's latest record at
///   issue time (none recorded: the wait is a no-op).
/// - execute: the head of a stream runs when it is not a collective and, for a wait, when the
///   captured record has completed.
/// - join: the head collective, send or recv starts when the rank's earlier operations on the
///   same communicator (collectives, sends and recvs, in issue order) completed and, under
///   serialized kernels, every one the rank issued earlier on any communicator completed.
/// - send / recv: the k-th send from one rank to another on a communicator pairs with the k-th
///   recv there from it. Consecutive sends and recvs of a thread with one nonzero group are an
///   ncclGroup: they reach their stream together at the last one's issue (ncclGroupEnd) and start
///   together; each leaves its stream once it and the ops ahead of it completed.
/// - complete: a communicator completes its next collective when every member joined and they
///   agree on kind, counts, reduction op and root; otherwise the first ready pair (by sender,
///   receiver, index) whose two sides started and agree on count and type. Inputs are read at
///   completion; the reduction runs in member order, a recv gets its send's values.
/// Kernels compute their values with the reference arithmetic (sequential_reference.h).

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/action.h"
#include "model/scenario.h"

namespace amaxcheck::props {

class StreamModel {
 public:
  /// Shares ownership of the scenario: RapidCheck keeps initial models alive while it shrinks,
  /// after the property call that made them has returned.
  explicit StreamModel(std::shared_ptr<const Scenario> scenario);

  /// Enabled actions, in the engine's canonical order (ranks: threads, then streams; then comms).
  std::vector<Action> enabled() const;
  void apply(const Action& action);
  /// Every program finished and every stream drained.
  bool done() const;
  const std::vector<float>& buffer(RankId rank, BufferId buffer) const;

 private:
  struct Queued {
    OpRef ref;
    int record = -1;  ///< event_record: its record; waits: the captured one (-1: none)
    bool joined = false;
    bool done = false;        ///< send / recv: completed (it leaves once the ops ahead did)
    std::uint64_t seq = 0;    ///< collectives: index on the communicator; send / recv: pair index
    std::uint64_t order = 0;  ///< collectives, sends and recvs: index among the rank's ops on the communicator
  };
  struct RankState {
    std::vector<std::uint32_t> pc;  ///< per thread
    std::vector<std::deque<Queued>> streams;
    std::vector<int> latest_record;  ///< per event
    std::vector<std::uint32_t> signals;  ///< per host flag
    std::vector<std::vector<float>> buffers;
    std::map<CommId, std::uint64_t> issued;              ///< collectives issued
    std::map<CommId, std::uint64_t> ops_issued, ops_done;  ///< collectives, sends and recvs
    std::map<std::tuple<CommId, RankId, bool>, std::uint64_t> p2p_issued;  ///< (comm, peer, is a send) -> sends / recvs issued
    std::vector<std::pair<CommId, std::uint64_t>> unfinished;  ///< comm ops (comm, order) in issue order
    std::vector<std::vector<Queued>> held;  ///< per thread: a group's ops issued before its last
  };
  using PairKey = std::tuple<RankId, RankId, std::uint64_t>;
  struct Member {
    RankId rank = 0;
    StreamId stream = 0;
    const Op* op = nullptr;
    OpRef ref;
    std::uint64_t order = 0;
  };
  struct CommState {
    std::uint64_t next = 0;
    std::map<std::uint64_t, std::map<std::uint32_t, Member>> joined;  ///< seq -> member index -> member
    /// (sender, receiver, index) -> the send and the recv that started
    std::map<PairKey, std::pair<std::optional<Member>, std::optional<Member>>> pairs;
  };

  const Op& op_at(const OpRef& ref) const;
  bool host_ready(RankId rank, const Op& op) const;
  bool may_join(RankId rank, const Queued& q) const;
  bool may_complete(CommId comm) const;
  bool collective_ready(CommId comm) const;
  /// The first pair of `comm` whose two sides started and agree, if any.
  std::optional<PairKey> ready_pair(CommId comm) const;
  /// The member `rank` leaving communicator `comm` with its op of index `order` completed.
  void leave(RankId rank, CommId comm, std::uint64_t order);
  void complete_pair(CommId comm);
  void issue(RankId rank, ThreadId thread);
  void execute(RankId rank, StreamId stream);
  void join(RankId rank, StreamId stream);
  void complete(CommId comm);
  void run_kernel(RankId rank, const Op& op);

  std::shared_ptr<const Scenario> scenario_;
  std::vector<RankState> ranks_;
  std::vector<bool> record_done_;
  std::vector<CommState> comms_;
};

}  // namespace amaxcheck::props
