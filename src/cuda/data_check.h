#pragma once
/// The data check every GPU run starts with (nccl-tests' #wrong column): each collective
/// signature the scenario uses runs once with inputs predictable by construction, and every
/// output element is compared with what it must be. Small integers only, so sums are exact in
/// any reduction order. Pure C++: the expectations are tested on a CPU.

#include <cstddef>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck::gpu {

/// One collective shape: what must be the same on every member for NCCL to match it.
struct CollectiveSignature {
  OpKind kind = OpKind::all_reduce;
  std::uint32_t send_count = 0;  ///< reads[0].count
  std::uint32_t recv_count = 0;  ///< writes[0].count
  ReduceOp reduce = ReduceOp::max;
  std::uint32_t root = 0;

  friend auto operator<=>(const CollectiveSignature& a, const CollectiveSignature& b) {
    return std::tie(a.kind, a.send_count, a.recv_count, a.reduce, a.root) <=>
           std::tie(b.kind, b.send_count, b.recv_count, b.reduce, b.root);
  }
  friend bool operator==(const CollectiveSignature&, const CollectiveSignature&) = default;
};

/// The signatures of communicator `comm`, from its first member's program (every process
/// derives the same list, so every member runs the same checks in the same order).
std::vector<CollectiveSignature> signatures_of(const Scenario& scenario, CommId comm);

/// Input element `k` of member `member`: (k mod 7) + member + 1.
float pattern_value(std::size_t member, std::size_t k);

/// The elements NCCL needs: the send buffer of `member` (all_gather: send_count; reduce_scatter:
/// recv_count * members; otherwise send_count) and the receive buffer size.
std::size_t send_elements(const CollectiveSignature& sig, std::size_t members);
std::size_t recv_elements(const CollectiveSignature& sig, std::size_t members);

/// The send buffer of `member`.
std::vector<float> pattern_input(const CollectiveSignature& sig, std::size_t member, std::size_t members);

/// What `member`'s receive buffer must hold afterwards.
std::vector<float> expected_output(const CollectiveSignature& sig, std::size_t member, std::size_t members);

}  // namespace amaxcheck::gpu
