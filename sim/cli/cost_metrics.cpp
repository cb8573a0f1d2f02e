#include "cli/cost_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "protocols/protocol.h"

namespace amaxcheck::cli {
namespace {

/// The scenario marks amax reductions by name only (protocols/protocol.h's prefix, which
/// hand-written scenario files follow too).
bool is_amax_reduction(const Op& op) {
  return is_collective(op.kind) && op.name.starts_with(amax_reduction_name_prefix);
}

bool is_stream_wait(OpKind kind) { return kind == OpKind::work_wait || kind == OpKind::stream_wait_event; }

}  // namespace

CostFigures cost_figures(const Scenario& scenario, const sched::TimedRun& run, const sched::CostModel& cost,
                         std::uint32_t iterations, bool separate_amax_comm) {
  CostFigures figures;
  const double iters = std::max<std::uint32_t>(iterations, 1);
  figures.iteration_time_us = run.makespan_us / iters;
  double exposed = 0, queued = 0;
  // Walked in issue order, which is each stream's order. Per stream and per event of every
  // rank, in flat arrays (a rank's streams, then its events, from one offset per rank).
  struct StreamMark {
    double ready = 0;         // end of the stream's previous op
    bool after_amax = false;  // its previous op is an amax reduction
  };
  std::vector<std::size_t> stream_base, event_base;
  std::size_t streams = 0, events = 0;
  for (const Rank& rank : scenario.ranks) {
    stream_base.push_back(streams);
    event_base.push_back(events);
    streams += rank.streams.size();
    events += rank.events.size();
  }
  std::vector<StreamMark> stream_marks(streams);
  std::vector<char> marks_amax(events, 0);  // the event was recorded right after an amax reduction
  const Op* amax_op = nullptr;
  for (const auto& timing : run.ops) {
    const Op& op = scenario.ranks[timing.op.rank].threads[timing.op.thread].program[timing.op.index];
    if (!is_device_op(op.kind)) continue;
    StreamMark& stream = stream_marks[stream_base[timing.op.rank] + op.stream];
    const bool event_op = op.kind == OpKind::event_record || is_stream_wait(op.kind);
    char* marks = event_op ? &marks_amax[event_base[timing.op.rank] + op.event] : nullptr;
    if (op.kind == OpKind::event_record) *marks = stream.after_amax;
    if (!timing.executed) continue;
    const double ready_at = std::max(stream.ready, timing.issue_end_us);
    if (is_amax_reduction(op)) {
      queued += std::max(0.0, timing.start_us - ready_at);
      if (amax_op == nullptr) amax_op = &op;
    }
    if (is_stream_wait(op.kind) && *marks) exposed += std::max(0.0, timing.end_us - ready_at);
    stream.after_amax = is_amax_reduction(op);
    stream.ready = std::max(stream.ready, timing.end_us);
  }
  const double per = iters * static_cast<double>(std::max<std::size_t>(scenario.ranks.size(), 1));
  figures.exposed_amax_latency_us = exposed / per;
  figures.amax_queued_us = queued / per;
  if (amax_op != nullptr && amax_op->comm < scenario.comms.size()) {
    const auto& members = scenario.comms[amax_op->comm].members;
    std::set<std::uint32_t> nodes;
    for (RankId r : members) {
      if (r < run.rank_node.size()) nodes.insert(run.rank_node[r]);
    }
    const sched::CollectiveCost c = cost.collective(*amax_op, members.size(), nodes.size());
    figures.amax_algo = cost.topology.flat ? "flat" : fmt::format("{}/{}", sched::to_string(c.algo), sched::to_string(c.proto));
    figures.amax_collective_us = c.total_us();
    if (separate_amax_comm) figures.extra_comm_memory_bytes = cost.extra_comm_memory_bytes(members.size(), nodes.size());
  }
  return figures;
}

}  // namespace amaxcheck::cli
