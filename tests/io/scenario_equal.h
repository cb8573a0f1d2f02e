#pragma once
// Field-by-field equality of scenarios (the model has no operator==), for round-trip tests.
#include <gtest/gtest.h>

#include <cstring>

#include "model/scenario.h"

namespace amaxcheck::testing {

inline bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

inline void expect_same_op(const Op& a, const Op& b, const std::string& at) {
  EXPECT_EQ(a.kind, b.kind) << at;
  EXPECT_EQ(a.name, b.name) << at;
  EXPECT_EQ(a.origin, b.origin) << at;
  EXPECT_EQ(a.stream, b.stream) << at;
  EXPECT_EQ(a.event, b.event) << at;
  EXPECT_EQ(a.comm, b.comm) << at;
  EXPECT_EQ(a.reduce, b.reduce) << at;
  EXPECT_EQ(a.dtype, b.dtype) << at;
  EXPECT_EQ(a.root, b.root) << at;
  EXPECT_EQ(a.peer, b.peer) << at;
  EXPECT_EQ(a.group, b.group) << at;
  EXPECT_EQ(a.format, b.format) << at;
  EXPECT_EQ(a.scale.tensors, b.scale.tensors) << at;
  EXPECT_EQ(a.scale.history_len, b.scale.history_len) << at;
  EXPECT_EQ(a.scale.algo, b.scale.algo) << at;
  EXPECT_EQ(a.scale.margin, b.scale.margin) << at;
  EXPECT_EQ(a.scale.format, b.scale.format) << at;
  EXPECT_EQ(a.reads, b.reads) << at;
  EXPECT_EQ(a.writes, b.writes) << at;
  EXPECT_TRUE(same_floats(a.values, b.values)) << at;
  EXPECT_EQ(a.flag, b.flag) << at;
  EXPECT_EQ(a.count, b.count) << at;
  EXPECT_EQ(a.cost_us, b.cost_us) << at;
}

inline void expect_same_scenario(const Scenario& a, const Scenario& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.kernels, b.kernels);
  ASSERT_EQ(a.comms.size(), b.comms.size());
  for (std::size_t c = 0; c < a.comms.size(); ++c) {
    EXPECT_EQ(a.comms[c].name, b.comms[c].name);
    EXPECT_EQ(a.comms[c].members, b.comms[c].members);
  }
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const Rank& x = a.ranks[r];
    const Rank& y = b.ranks[r];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.flags, y.flags);
    ASSERT_EQ(x.streams.size(), y.streams.size());
    for (std::size_t i = 0; i < x.streams.size(); ++i) EXPECT_EQ(x.streams[i].name, y.streams[i].name);
    ASSERT_EQ(x.events.size(), y.events.size());
    for (std::size_t i = 0; i < x.events.size(); ++i) EXPECT_EQ(x.events[i].name, y.events[i].name);
    ASSERT_EQ(x.buffers.size(), y.buffers.size());
    for (std::size_t i = 0; i < x.buffers.size(); ++i) {
      EXPECT_EQ(x.buffers[i].name, y.buffers[i].name);
      EXPECT_EQ(x.buffers[i].size, y.buffers[i].size);
      EXPECT_EQ(x.buffers[i].host, y.buffers[i].host);
      EXPECT_TRUE(same_floats(x.buffers[i].init, y.buffers[i].init));
    }
    ASSERT_EQ(x.threads.size(), y.threads.size());
    for (std::size_t t = 0; t < x.threads.size(); ++t) {
      EXPECT_EQ(x.threads[t].name, y.threads[t].name);
      ASSERT_EQ(x.threads[t].program.size(), y.threads[t].program.size());
      for (std::size_t i = 0; i < x.threads[t].program.size(); ++i) {
        expect_same_op(x.threads[t].program[i], y.threads[t].program[i],
                       "rank " + std::to_string(r) + " thread " + std::to_string(t) + " op " + std::to_string(i));
      }
    }
  }
  ASSERT_EQ(a.checks.size(), b.checks.size());
  for (std::size_t c = 0; c < a.checks.size(); ++c) {
    EXPECT_EQ(a.checks[c].tensor, b.checks[c].tensor);
    ASSERT_EQ(a.checks[c].replicas.size(), b.checks[c].replicas.size());
    for (std::size_t i = 0; i < a.checks[c].replicas.size(); ++i) {
      EXPECT_EQ(a.checks[c].replicas[i].rank, b.checks[c].replicas[i].rank);
      EXPECT_EQ(a.checks[c].replicas[i].range, b.checks[c].replicas[i].range);
    }
    EXPECT_TRUE(same_floats(a.checks[c].expected, b.checks[c].expected)) << a.checks[c].tensor;
    EXPECT_EQ(a.checks[c].expected_reference, b.checks[c].expected_reference) << a.checks[c].tensor;
  }
}

}  // namespace amaxcheck::testing
