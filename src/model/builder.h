#pragma once
/// ScenarioBuilder: a small fluent way to write scenarios by hand (tests, litmus programs,
/// custom models). Every add_* returns the new object's index.

#include <string>
#include <utility>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck {

class ScenarioBuilder {
 public:
  explicit ScenarioBuilder(std::string name = "scenario") { s_.name = std::move(name); }

  RankId rank(std::string name = "") {
    s_.ranks.push_back(Rank{name.empty() ? "rank" + std::to_string(s_.ranks.size()) : std::move(name), 0, {}, {}, {}, {}, {}});
    return static_cast<RankId>(s_.ranks.size() - 1);
  }
  ThreadId thread(RankId r, std::string name) { return add(s_.ranks[r].threads, Thread{std::move(name), {}}); }
  StreamId stream(RankId r, std::string name) { return add(s_.ranks[r].streams, Stream{std::move(name)}); }
  EventId event(RankId r, std::string name) { return add(s_.ranks[r].events, Event{std::move(name)}); }
  std::uint32_t flag(RankId r, std::string name) { return add(s_.ranks[r].flags, std::move(name)); }
  BufferId buffer(RankId r, std::string name, std::uint32_t size, std::vector<float> init = {}) {
    return add(s_.ranks[r].buffers, Buffer{std::move(name), size, false, std::move(init)});
  }
  CommId comm(std::string name, std::vector<RankId> members) {
    return add(s_.comms, Communicator{std::move(name), std::move(members)});
  }
  /// Appends `op` to the program of thread `t` of rank `r`.
  Op& op(RankId r, ThreadId t, Op op) {
    auto& program = s_.ranks[r].threads[t].program;
    program.push_back(std::move(op));
    return program.back();
  }
  ScenarioBuilder& kernels(KernelConcurrency k) {
    s_.kernels = k;
    return *this;
  }
  Scenario& scenario() { return s_; }
  Scenario build() const { return s_; }

  // Op constructors for the common kinds.
  static Op all_reduce(StreamId stream, CommId comm, Range in, Range out, std::string name = "all_reduce",
                       ReduceOp reduce = ReduceOp::max) {
    Op o = base(OpKind::all_reduce, stream, std::move(name));
    o.comm = comm;
    o.reduce = reduce;
    o.reads = {in};
    o.writes = {out};
    return o;
  }
  /// ncclSend of `from` to member `peer` of `comm`; `group` > 0 joins an ncclGroup.
  static Op send(StreamId stream, CommId comm, std::uint32_t peer, Range from, std::string name = "send",
                 std::uint32_t group = 0) {
    Op o = base(OpKind::send, stream, std::move(name));
    o.comm = comm;
    o.peer = peer;
    o.group = group;
    o.reads = {from};
    return o;
  }
  /// ncclRecv into `to` from member `peer` of `comm`.
  static Op recv(StreamId stream, CommId comm, std::uint32_t peer, Range to, std::string name = "recv",
                 std::uint32_t group = 0) {
    Op o = base(OpKind::recv, stream, std::move(name));
    o.comm = comm;
    o.peer = peer;
    o.group = group;
    o.writes = {to};
    return o;
  }
  static Op copy(StreamId stream, Range from, Range to, std::string name = "copy") {
    Op o = base(OpKind::copy, stream, std::move(name));
    o.reads = {from};
    o.writes = {to};
    return o;
  }
  static Op fill(StreamId stream, Range to, std::vector<float> values, std::string name = "fill") {
    Op o = base(OpKind::fill, stream, std::move(name));
    o.writes = {to};
    o.values = std::move(values);
    return o;
  }
  static Op record(StreamId stream, EventId event, std::string name = "record") {
    Op o = base(OpKind::event_record, stream, std::move(name));
    o.event = event;
    return o;
  }
  static Op wait(StreamId stream, EventId event, std::string name = "wait", OpKind kind = OpKind::stream_wait_event) {
    Op o = base(kind, stream, std::move(name));
    o.event = event;
    return o;
  }
  static Op host(OpKind kind, std::uint32_t target = 0, std::string name = "") {
    Op o = base(kind, target, name.empty() ? to_string(kind) : std::move(name));
    o.event = target;
    o.flag = target;
    return o;
  }

 private:
  static Op base(OpKind kind, StreamId stream, std::string name) {
    Op o;
    o.kind = kind;
    o.stream = stream;
    o.name = std::move(name);
    return o;
  }
  template <class T, class V>
  static std::uint32_t add(std::vector<T>& v, V&& value) {
    v.push_back(std::forward<V>(value));
    return static_cast<std::uint32_t>(v.size() - 1);
  }
  Scenario s_;
};

}  // namespace amaxcheck
