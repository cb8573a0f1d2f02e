#include "model/scenario.h"

namespace amaxcheck {

namespace {
std::uint32_t first_count(const std::vector<Range>& ranges) { return ranges.empty() ? 0 : ranges.front().count; }
}  // namespace

const char* collective_disagreement(const Op& a, const Op& b) {
  if (a.kind != b.kind) return "type mismatch";
  if (first_count(a.reads) != first_count(b.reads)) return "size mismatch";
  if (a.dtype != b.dtype) return "dtype mismatch";
  if (has_reduce_op(a.kind) && a.reduce != b.reduce) return "reduce op mismatch";
  if (has_root(a.kind) && a.root != b.root) return "root mismatch";
  if (first_count(a.writes) != first_count(b.writes)) return "size mismatch";
  return nullptr;
}

bool collectives_agree(const Op& a, const Op& b) { return collective_disagreement(a, b) == nullptr; }

const char* p2p_disagreement(const Op& send, const Op& recv) {
  if (first_count(send.reads) != first_count(recv.writes)) return "size mismatch";
  if (send.dtype != recv.dtype) return "dtype mismatch";
  return nullptr;
}

int member_index(const Communicator& comm, RankId rank) {
  for (std::size_t i = 0; i < comm.members.size(); ++i) {
    if (comm.members[i] == rank) return static_cast<int>(i);
  }
  return -1;
}

std::size_t op_count(const Scenario& scenario) {
  std::size_t n = 0;
  for (const Rank& rank : scenario.ranks) {
    for (const Thread& thread : rank.threads) n += thread.program.size();
  }
  return n;
}

}  // namespace amaxcheck
