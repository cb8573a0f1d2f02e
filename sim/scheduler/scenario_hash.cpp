#include "scheduler/scenario_hash.h"

#include <fmt/format.h>

#include <bit>
#include <cstdint>

namespace amaxcheck::sched {
namespace {

class Fnv1a {
 public:
  void byte(std::uint8_t b) {
    hash_ ^= b;
    hash_ *= 0x100000001b3ULL;
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void str(const std::string& s) {
    u64(s.size());
    for (char c : s) byte(static_cast<std::uint8_t>(c));
  }
  void f32(float v) { u64(std::bit_cast<std::uint32_t>(v)); }
  void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  void range(const Range& r) {
    u64(r.buffer);
    u64(r.offset);
    u64(r.count);
  }
  template <class T, class F>
  void list(const std::vector<T>& items, F&& each) {
    u64(items.size());
    for (const T& item : items) each(item);
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

void hash_op(Fnv1a& h, const Op& op) {
  h.u64(static_cast<std::uint64_t>(op.kind));
  h.str(op.name);
  h.str(op.origin);
  h.u64(op.stream);
  h.u64(op.event);
  h.u64(op.comm);
  h.u64(static_cast<std::uint64_t>(op.reduce));
  h.u64(static_cast<std::uint64_t>(op.dtype));
  h.u64(op.root);
  h.u64(static_cast<std::uint64_t>(op.format));
  h.u64(op.scale.tensors);
  h.u64(op.scale.history_len);
  h.u64(static_cast<std::uint64_t>(op.scale.algo));
  h.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(op.scale.margin)));
  h.u64(static_cast<std::uint64_t>(op.scale.format));
  h.list(op.reads, [&](const Range& r) { h.range(r); });
  h.list(op.writes, [&](const Range& r) { h.range(r); });
  h.list(op.values, [&](float v) { h.f32(v); });
  h.u64(op.flag);
  h.u64(op.count);
  h.f64(op.cost_us);
}

}  // namespace

std::string scenario_hash(const Scenario& s) {
  Fnv1a h;
  h.str("amaxcheck-scenario-v1");
  h.str(s.name);
  h.u64(static_cast<std::uint64_t>(s.kernels));
  h.list(s.ranks, [&](const Rank& rank) {
    h.str(rank.name);
    h.u64(rank.device);
    h.list(rank.threads, [&](const Thread& t) {
      h.str(t.name);
      h.list(t.program, [&](const Op& op) { hash_op(h, op); });
    });
    h.list(rank.streams, [&](const Stream& st) { h.str(st.name); });
    h.list(rank.events, [&](const Event& e) { h.str(e.name); });
    h.list(rank.buffers, [&](const Buffer& b) {
      h.str(b.name);
      h.u64(b.size);
      h.u64(b.host ? 1 : 0);
      h.list(b.init, [&](float v) { h.f32(v); });
    });
    h.list(rank.flags, [&](const std::string& f) { h.str(f); });
  });
  h.list(s.comms, [&](const Communicator& c) {
    h.str(c.name);
    h.list(c.members, [&](RankId m) { h.u64(m); });
  });
  h.list(s.checks, [&](const ReplicaCheck& c) {
    h.str(c.tensor);
    h.list(c.replicas, [&](const ReplicaCheck::Replica& r) {
      h.u64(r.rank);
      h.range(r.range);
    });
    h.list(c.expected, [&](float v) { h.f32(v); });
  });
  // Scenario::source says how to rebuild the scenario; it is not part of what runs.
  return fmt::format("fnv1a64:{:016x}", h.value());
}

}  // namespace amaxcheck::sched
