#include "cuda/data_check.h"

#include <algorithm>

#include "util/check.h"

namespace amaxcheck::gpu {

std::vector<CollectiveSignature> signatures_of(const Scenario& scenario, CommId comm) {
  const Communicator& spec = scenario.comms.at(comm);
  std::vector<CollectiveSignature> out;
  if (spec.members.empty()) return out;
  const Rank& first = scenario.ranks.at(spec.members.front());
  std::set<CollectiveSignature> seen;
  for (const Thread& thread : first.threads) {
    for (const Op& op : thread.program) {
      if (!is_collective(op.kind) || op.comm != comm || is_discarded_collective(op)) continue;
      CollectiveSignature sig{op.kind, op.reads.empty() ? 0u : op.reads.front().count,
                              op.writes.empty() ? 0u : op.writes.front().count, op.reduce, op.root};
      if (!has_reduce_op(op.kind)) sig.reduce = ReduceOp::max;
      if (!has_root(op.kind)) sig.root = 0;
      if (seen.insert(sig).second) out.push_back(sig);
    }
  }
  return out;
}

float pattern_value(std::size_t member, std::size_t k) { return static_cast<float>(k % 7 + member + 1); }

std::size_t send_elements(const CollectiveSignature& sig, std::size_t members) {
  if (sig.kind == OpKind::reduce_scatter) return static_cast<std::size_t>(sig.recv_count) * members;
  if (sig.kind == OpKind::broadcast) return sig.recv_count;
  return sig.send_count;
}

std::size_t recv_elements(const CollectiveSignature& sig, std::size_t members) {
  if (sig.kind == OpKind::all_gather) return static_cast<std::size_t>(sig.send_count) * members;
  if (sig.kind == OpKind::all_reduce) return sig.send_count;
  return sig.recv_count;
}

std::vector<float> pattern_input(const CollectiveSignature& sig, std::size_t member, std::size_t members) {
  std::vector<float> out(send_elements(sig, members));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = pattern_value(member, k);
  return out;
}

std::vector<float> expected_output(const CollectiveSignature& sig, std::size_t member, std::size_t members) {
  AMAX_CHECK(members > 0 && member < members, "data check member out of range");
  std::vector<float> out(recv_elements(sig, members));
  // Reduction over every member of element k of their inputs; exact for small integers.
  auto reduced = [&](std::size_t k) {
    float acc = pattern_value(0, k);
    for (std::size_t j = 1; j < members; ++j) {
      acc = sig.reduce == ReduceOp::max ? std::max(acc, pattern_value(j, k)) : acc + pattern_value(j, k);
    }
    return acc;
  };
  for (std::size_t k = 0; k < out.size(); ++k) {
    switch (sig.kind) {
      case OpKind::all_reduce: out[k] = reduced(k); break;
      case OpKind::all_gather: out[k] = pattern_value(k / sig.send_count, k % sig.send_count); break;
      case OpKind::reduce_scatter: out[k] = reduced(member * sig.recv_count + k); break;
      case OpKind::broadcast: out[k] = pattern_value(std::min<std::size_t>(sig.root, members - 1), k); break;
      default: AMAX_CHECK(false, "not a collective");
    }
  }
  return out;
}

}  // namespace amaxcheck::gpu
