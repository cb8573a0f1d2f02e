// The value semantics of ops: what kernels and collectives compute.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/engine_state.h"
#include "engine/fp8_math.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

std::span<float> view(std::vector<std::vector<float>>& buffers, const Range& r) {
  AMAX_CHECK(r.buffer < buffers.size() && r.offset + r.count <= buffers[r.buffer].size(),
             "range outside its buffer (scenario validation should have caught this)");
  return std::span<float>(buffers[r.buffer]).subspan(r.offset, r.count);
}

/// MAX ignores NaN like fmaxf; equal operands (+0 and -0) give +0 whatever their order, so a
/// reduction does not depend on member order or on how the compiler inlines fmax.
float reduce(ReduceOp op, float a, float b) {
  if (op == ReduceOp::sum) return a + b;
  if (a == b) return std::signbit(a) ? b : a;
  return std::fmax(a, b);
}

}  // namespace

void run_kernel(const Op& op, std::vector<std::vector<float>>& buffers, Mutant mutant) {
  switch (op.kind) {
    case OpKind::fill: {
      auto out = view(buffers, op.writes.at(0));
      AMAX_CHECK(op.values.size() == out.size(), "fill values do not match its range");
      std::copy(op.values.begin(), op.values.end(), out.begin());
      return;
    }
    case OpKind::local_amax: {
      auto in = view(buffers, op.reads.at(0));
      view(buffers, op.writes.at(0))[0] = abs_max(in);
      return;
    }
    case OpKind::fp8_cast: {
      auto in = view(buffers, op.reads.at(0));
      const float scale = view(buffers, op.reads.at(1))[0];
      auto out = view(buffers, op.writes.at(0));
      for (std::size_t i = 0; i < in.size(); ++i) out[i] = round_to_fp8(in[i] * scale, op.format);
      return;
    }
    case OpKind::copy: {
      for (std::size_t i = 0; i < op.reads.size(); ++i) {
        // memmove, so overlapping ranges behave like a device memcpy of a snapshot (it copies as
        // if through a temporary, without allocating one per copy).
        auto in = view(buffers, op.reads[i]);
        auto out = view(buffers, op.writes.at(i));
        AMAX_CHECK(out.size() >= in.size(), "copy writes fewer elements than it reads");
        std::memmove(out.data(), in.data(), in.size() * sizeof(float));
      }
      return;
    }
    case OpKind::scale_update:
      amax_and_scale_update(op.scale, view(buffers, op.writes.at(0)), view(buffers, op.writes.at(1)),
                            view(buffers, op.writes.at(2)), mutant != Mutant::skip_finite_check);
      return;
    default:
      AMAX_CHECK(false, std::string("not a kernel: ") + to_string(op.kind));
  }
}

void complete_collective(const std::vector<const Joined*>& members, std::vector<RankState>& ranks) {
  const Op& op = *members.front()->op;
  const std::size_t m = members.size();
  auto input = [&](std::size_t i) -> std::span<const float> {
    return view(ranks[members[i]->rank].buffers, members[i]->op->reads.at(0));
  };
  // Each kind's result is computed once for every member, straight from the members' input
  // ranges and before any output is written (an output may overlap its input: in place), then
  // each member's output takes its part: O(members x elements), with no copy of the inputs.
  std::vector<float> result;
  switch (op.kind) {
    case OpKind::all_reduce:
    case OpKind::reduce_scatter: {
      const auto first = input(0);
      result.assign(first.begin(), first.end());
      for (std::size_t i = 1; i < m; ++i) {
        const auto in = input(i);
        const std::size_t both = std::min(result.size(), in.size());
        for (std::size_t k = 0; k < both; ++k) result[k] = reduce(op.reduce, result[k], in[k]);
      }
      break;
    }
    case OpKind::all_gather:
      for (std::size_t i = 0; i < m; ++i) {
        const auto in = input(i);
        result.insert(result.end(), in.begin(), in.end());
      }
      break;
    case OpKind::broadcast: {
      const auto root = input(std::min<std::size_t>(op.root, m - 1));
      result.assign(root.begin(), root.end());
      break;
    }
    default: AMAX_CHECK(false, "not a collective");
  }
  for (std::size_t i = 0; i < m; ++i) {
    auto out = view(ranks[members[i]->rank].buffers, members[i]->op->writes.at(0));
    std::span<const float> part(result);
    if (op.kind == OpKind::reduce_scatter) {
      const std::size_t c = out.size();
      part = part.subspan(std::min(result.size(), i * c));
      part = part.first(std::min(part.size(), c));
    }
    // Under the complete_without_all_members mutant the shapes may not line up; copy what fits.
    std::copy_n(part.begin(), std::min(part.size(), out.size()), out.begin());
  }
}

void complete_p2p(const P2pPair& pair, std::vector<RankState>& ranks) {
  auto in = view(ranks[pair.send->rank].buffers, pair.send->op->reads.at(0));
  const std::vector<float> data(in.begin(), in.end());  // sender and receiver may be one rank
  auto out = view(ranks[pair.recv->rank].buffers, pair.recv->op->writes.at(0));
  std::copy_n(data.begin(), std::min(data.size(), out.size()), out.begin());
}

std::uint64_t object_key(ObjectType type, std::uint32_t rank, std::uint32_t index) {
  return (static_cast<std::uint64_t>(type) << 56) | (static_cast<std::uint64_t>(rank & 0xFFFFFF) << 32) | index;
}

}  // namespace amaxcheck
