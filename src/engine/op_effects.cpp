// The value semantics of ops: what kernels and collectives compute.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "engine/engine_state.h"
#include "engine/fp8_math.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

/// Inlined: every kernel and collective takes two to four views, and as a call the view cost more
/// than the arithmetic of the small ranges amax synchronisation works on (the check's failure
/// path is a noreturn call, which the compiler keeps out of the way).
[[gnu::always_inline]] inline std::span<float> view(BufferValues& buffers, const Range& r) {
  AMAX_CHECK(r.buffer < buffers.size() && r.offset + r.count <= buffers[r.buffer].size(),
             "range outside its buffer (scenario validation should have caught this)");
  return buffers[r.buffer].subspan(r.offset, r.count);
}

/// MAX ignores NaN like fmaxf; equal operands (+0 and -0) give +0 whatever their order, so a
/// reduction does not depend on member order or on how the compiler inlines fmax.
float max_of(float a, float b) {
  if (a == b) return std::signbit(a) ? b : a;
  return std::fmax(a, b);
}

/// acc[k] = acc[k] op in[k] for the elements both have, with the op chosen once, not per element.
void reduce_into(ReduceOp op, std::span<float> acc, std::span<const float> in) {
  const std::size_t both = std::min(acc.size(), in.size());
  if (op == ReduceOp::sum) {
    for (std::size_t k = 0; k < both; ++k) acc[k] = acc[k] + in[k];
  } else {
    for (std::size_t k = 0; k < both; ++k) acc[k] = max_of(acc[k], in[k]);
  }
}

/// Room for one collective's result: on the stack when it is small, as every amax reduction is (a
/// value or a few per tensor), so a collective's completion allocates nothing; on the heap beyond.
class CollectiveResult {
 public:
  explicit CollectiveResult(std::size_t size) {
    if (size <= local_.size()) {
      values_ = std::span<float>(local_.data(), size);
    } else {
      heap_.resize(size);
      values_ = heap_;
    }
  }
  std::span<float> values() { return values_; }

 private:
  static constexpr std::size_t local_floats = 256;
  std::array<float, local_floats> local_;  // not zeroed: the result is written before it is read
  std::vector<float> heap_;
  std::span<float> values_;
};

}  // namespace

bool kernel_has_its_ranges(const Op& op) {
  switch (op.kind) {
    case OpKind::fill: return !op.writes.empty();
    case OpKind::local_amax: return !op.reads.empty() && !op.writes.empty() && op.writes[0].count > 0;
    case OpKind::fp8_cast: return op.reads.size() >= 2 && op.reads[1].count > 0 && !op.writes.empty();
    case OpKind::copy: return op.writes.size() >= op.reads.size();
    case OpKind::scale_update: return op.writes.size() >= 3;
    default: return false;  // not a kernel
  }
}

void run_kernel(const Op& op, const KernelViews& views, Mutant mutant) {
  switch (op.kind) {
    case OpKind::fill: {
      const std::span<float> out = views.writes[0];
      AMAX_CHECK(op.values.size() == out.size(), "fill values do not match its range");
      std::copy(op.values.begin(), op.values.end(), out.begin());
      return;
    }
    case OpKind::local_amax: views.writes[0][0] = abs_max(views.reads[0]); return;
    case OpKind::fp8_cast: cast_to_fp8(views.reads[0], views.reads[1][0], views.writes[0], op.format); return;
    case OpKind::copy: {
      for (std::size_t i = 0; i < views.reads.size(); ++i) {
        // memmove, so overlapping ranges behave like a device memcpy of a snapshot (it copies as
        // if through a temporary, without allocating one per copy).
        const std::span<const float> in = views.reads[i];
        const std::span<float> out = views.writes[i];
        AMAX_CHECK(out.size() >= in.size(), "copy writes fewer elements than it reads");
        std::memmove(out.data(), in.data(), in.size() * sizeof(float));
      }
      return;
    }
    case OpKind::scale_update:
      amax_and_scale_update(op.scale, views.writes[0], views.writes[1], views.writes[2], mutant != Mutant::skip_finite_check);
      return;
    default:
      AMAX_CHECK(false, std::string("not a kernel: ") + to_string(op.kind));
  }
}

void run_kernel(const Op& op, BufferValues& buffers, Mutant mutant) {
  // Each range checked as it is viewed; then the ranges the kernel indexes.
  std::vector<std::span<float>> views;
  for (const Range& range : op.reads) views.push_back(view(buffers, range));
  for (const Range& range : op.writes) views.push_back(view(buffers, range));
  const bool kernel = moves_data(op.kind) && !is_comm_op(op.kind);
  AMAX_CHECK(!kernel || kernel_has_its_ranges(op), "kernel " + op.name + " lacks a range it reads or writes");
  const std::span<const std::span<float>> all(views);
  run_kernel(op, KernelViews{all.first(op.reads.size()), all.subspan(op.reads.size())}, mutant);
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
  std::size_t size = 0;
  switch (op.kind) {
    case OpKind::all_reduce:
    case OpKind::reduce_scatter: size = input(0).size(); break;
    case OpKind::all_gather:
      for (std::size_t i = 0; i < m; ++i) size += input(i).size();
      break;
    case OpKind::broadcast: size = input(std::min<std::size_t>(op.root, m - 1)).size(); break;
    default: AMAX_CHECK(false, "not a collective");
  }
  CollectiveResult room(size);
  const std::span<float> result = room.values();
  switch (op.kind) {
    case OpKind::all_reduce:
    case OpKind::reduce_scatter: {
      const auto first = input(0);
      std::copy(first.begin(), first.end(), result.begin());
      for (std::size_t i = 1; i < m; ++i) reduce_into(op.reduce, result, input(i));
      break;
    }
    case OpKind::all_gather: {
      auto next = result.begin();
      for (std::size_t i = 0; i < m; ++i) {
        const auto in = input(i);
        next = std::copy(in.begin(), in.end(), next);
      }
      break;
    }
    default: {  // broadcast
      const auto root = input(std::min<std::size_t>(op.root, m - 1));
      std::copy(root.begin(), root.end(), result.begin());
      break;
    }
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
