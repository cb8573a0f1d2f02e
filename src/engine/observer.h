#pragma once
/// What the engine tells detectors. Detectors observe these events and never steer the run.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/action.h"
#include "engine/vector_clock.h"
#include "model/scenario.h"

namespace amaxcheck {

class Engine;

/// Where an op lives and what it is, for naming hazard participants.
struct OpSite {
  OpRef ref;
  const Op* op = nullptr;
  /// "thread main", "stream compute", ...: the engine's own name (Engine::lane_name), which
  /// lives as long as the engine; detectors copy it into what outlives the run (a Participant).
  std::string_view lane;
  std::size_t step = 0;
};

/// A host thread issued an op (device ops are queued; host-blocking ops have returned).
struct IssueEvent {
  OpSite site;
  const VectorClock* thread_clock = nullptr;  ///< the issuing thread's clock, after the issue
  ActorId thread_actor = 0;
  std::uint64_t seq = 0;  ///< collectives: 0-based index among this rank's ops on op->comm
};

/// A device op or host op touched memory. `clock` is the accessing actor's clock at the access;
/// (actor, epoch) identifies the access itself.
struct AccessEvent {
  OpSite site;
  RankId rank = 0;
  ActorId actor = 0;
  Epoch epoch = 0;
  const VectorClock* clock = nullptr;
  const std::vector<Range>* reads = nullptr;
  const std::vector<Range>* writes = nullptr;
};

/// The pending collective of a communicator completed on every member.
struct CompleteEvent {
  CommId comm = 0;
  std::uint64_t seq = 0;
  std::size_t step = 0;
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
