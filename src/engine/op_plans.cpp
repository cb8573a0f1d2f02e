// The engine's per-op plans (OpPlan in engine_state.h): what the steps of each op read, found
// once when the engine is built.
#include <algorithm>
#include <string>

#include "engine/engine_state.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

bool in_bounds(const BufferValues& buffers, const Range& r) {
  return r.buffer < buffers.size() && std::uint64_t{r.offset} + r.count <= buffers[r.buffer].size();
}

std::span<float> view_of(BufferValues& buffers, const Range& r) {
  return buffers[r.buffer].subspan(r.offset, r.count);
}

}  // namespace

void build_op_plans(Engine::State& st) {
  const Scenario& s = st.scenario;
  st.op_plans.clear();
  st.kernel_views.clear();
  for (RankId r = 0; r < s.ranks.size(); ++r) {
    const Rank& rank = s.ranks[r];
    RankState& state = st.ranks[r];
    for (ThreadId t = 0; t < rank.threads.size(); ++t) {
      AMAX_CHECK(st.op_plans.size() == st.op_number[r][t], "op plans out of OpSite::number order");
      const std::vector<Op>& program = rank.threads[t].program;
      for (std::size_t i = 0; i < program.size(); ++i) {
        const Op& op = program[i];
        OpPlan plan;
        plan.next_is_device = i + 1 < program.size() && is_device_op(program[i + 1].kind);
        plan.held_for_group = p2p_group_size(s, OpRef{r, t, static_cast<std::uint32_t>(i)}) > 1;
        plan.ends_group = i > 0 && st.op_plans.back().held_for_group && !plan.held_for_group;
        if (is_device_op(op.kind)) {
          AMAX_CHECK(op.stream < state.streams.size(),
                     "op " + op.name + " names a stream its rank does not have (scenario validation should have caught this)");
          plan.queue = &state.streams[op.stream].queue;
          // Beyond 64 lanes the bit goes unread (State::lane_bits_ok is false).
          plan.stream_bit = std::uint64_t{1} << ((rank.threads.size() + op.stream) & 63);
          plan.stream_syncers = state.streams[op.stream].syncers;
        }
        const auto in_rank = [&](const Range& range) { return in_bounds(state.buffers, range); };
        if (kernel_has_its_ranges(op) && std::all_of(op.reads.begin(), op.reads.end(), in_rank) &&
            std::all_of(op.writes.begin(), op.writes.end(), in_rank)) {
          plan.has_views = true;
          plan.first_view = static_cast<std::uint32_t>(st.kernel_views.size());
          for (const Range& range : op.reads) st.kernel_views.push_back(view_of(state.buffers, range));
          for (const Range& range : op.writes) st.kernel_views.push_back(view_of(state.buffers, range));
        }
        st.op_plans.push_back(plan);
      }
    }
  }
}

}  // namespace amaxcheck
