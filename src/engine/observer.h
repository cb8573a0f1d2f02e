#pragma once
/// What the engine tells detectors. Detectors observe these events and never steer the run.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/action.h"
#include "engine/vector_clock.h"
#include "model/scenario.h"

namespace amaxcheck {

class Engine;

/// Calls f(number, ref, op) for every op of `scenario`, in OpSite::number order: rank by rank,
/// each rank's threads in order, each thread's program in order. Detectors build their per-op
/// tables with it once per scenario, so that an event reads its op's entry with one index.
template <class F>
void for_each_op(const Scenario& scenario, F&& f) {
  std::uint32_t number = 0;
  for (std::size_t r = 0; r < scenario.ranks.size(); ++r) {
    const auto& threads = scenario.ranks[r].threads;
    for (std::size_t t = 0; t < threads.size(); ++t) {
      for (std::size_t i = 0; i < threads[t].program.size(); ++i) {
        f(number++, OpRef{static_cast<RankId>(r), static_cast<ThreadId>(t), static_cast<std::uint32_t>(i)},
          threads[t].program[i]);
      }
    }
  }
}

/// A set of a scenario's ops, by OpSite::number: a bit each, in 64-bit words, so that sets are
/// joined a word at a time (Engine::add_observer joins the access observers' sets every run).
class OpSet {
 public:
  OpSet() = default;
  explicit OpSet(std::size_t ops) : words_((ops + 63) / 64, 0), size_(ops) {}
  std::size_t size() const { return size_; }
  bool contains(std::uint32_t op) const { return (words_[op >> 6] >> (op & 63) & 1) != 0; }
  void insert(std::uint32_t op) { words_[op >> 6] |= std::uint64_t{1} << (op & 63); }
  /// Every op of `other` (of the same size) is in this set too.
  void insert_all(const OpSet& other) {
    for (std::size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }
  /// Every op (of `size()`), or none.
  void fill(bool every) {
    std::fill(words_.begin(), words_.end(), every ? ~std::uint64_t{0} : 0);
  }

 private:
  std::vector<std::uint64_t> words_;  ///< bits beyond size() may be set (fill): never asked
  std::size_t size_ = 0;
};

/// Where an op lives and what it is, for naming hazard participants.
struct OpSite {
  OpRef ref;
  /// The op's dense number in the scenario (for_each_op's order): an index into a detector's
  /// per-op tables. Fills what was padding after `ref`.
  std::uint32_t number = 0;
  const Op* op = nullptr;
  /// "thread main", "stream compute", ...: the engine's own name (Engine::lane_name), which
  /// lives as long as the engine; detectors copy it into what outlives the run (a Participant).
  std::string_view lane;
  std::size_t step = 0;
};
static_assert(sizeof(OpSite) == 48, "OpSite is copied into detectors' records at every event");

/// A host thread issued an op (device ops are queued; host-blocking ops have returned).
struct IssueEvent {
  OpSite site;
  const VectorClock* thread_clock = nullptr;  ///< the issuing thread's clock, after the issue
  ActorId thread_actor = 0;
  std::uint64_t seq = 0;  ///< collectives: 0-based index among this rank's ops on op->comm
};

/// A device op or host op touched memory. `clock` is the accessing actor's clock at the access;
/// (actor, epoch) identifies the access itself. `reads` and `writes` are the op's own (site.op),
/// so a detector may read tables it built from the scenario's ops (by site.number) instead.
struct AccessEvent {
  OpSite site;
  RankId rank = 0;
  ActorId actor = 0;
  Epoch epoch = 0;
  const VectorClock* clock = nullptr;
  const std::vector<Range>* reads = nullptr;
  const std::vector<Range>* writes = nullptr;
};

/// The pending collective of a communicator completed on every member (or a send / recv pair
/// of it did): what its ops write lands now, not at their joins.
struct CompleteEvent {
  CommId comm = 0;
  std::uint64_t seq = 0;
  std::size_t step = 0;
  /// The ops that completed, by OpSite::number: every joined member's, or the send and the recv.
  std::span<const std::uint32_t> ops;
};

class Observer {
 public:
  /// The per-step events an observer handles. The engine calls an observer only for these: a
  /// small scenario's step is a few hundred instructions, and a virtual call that does nothing
  /// is a visible part of it. Every observer gets on_finish.
  struct Events {
    bool issue = true;
    bool access = true;
    bool complete = true;
    /// With `issue`: only the issues of communicator ops (is_comm_op), which are a few of a
    /// step's issues; the others are kernels and event ops.
    bool comm_issues_only = false;
    /// With `access`: only the accesses of the ops set here (by OpSite::number, one entry per
    /// op of the scenario), a table the observer owns and keeps while it is added; null: every
    /// op's. An access no observer watches builds no event, and most accesses of a step are
    /// kernels' on buffers no detector has anything to say about.
    const OpSet* access_ops = nullptr;
  };

  virtual ~Observer() = default;
  /// Read once, when the observer is added (Engine::add_observer). All of them unless overridden.
  virtual Events events() const { return {}; }
  virtual void on_issue(const IssueEvent&) {}
  virtual void on_access(const AccessEvent&) {}
  virtual void on_complete(const CompleteEvent&) {}
  /// Called once when no action is enabled (finished, or stuck).
  virtual void on_finish(const Engine&) {}
};

}  // namespace amaxcheck
