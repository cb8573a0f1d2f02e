#include "cli/cost_metrics.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "protocols/protocol.h"

namespace amaxcheck::cli {
namespace {

using Interval = std::pair<double, double>;

/// The scenario marks amax reductions by name only (protocols/protocol.h's prefix, which
/// hand-written scenario files follow too).
bool is_amax_reduction(const sched::OpTiming& op) {
  return is_collective(op.kind) && op.name.starts_with(amax_reduction_name_prefix);
}

bool is_compute_kernel(OpKind kind) { return op_kind_info(kind).place == OpPlace::stream && moves_data(kind); }

/// Length of `span` not covered by the (sorted, merged) `cover` intervals.
double uncovered(const Interval& span, const std::vector<Interval>& cover) {
  double exposed = span.second - span.first;
  for (const auto& [lo, hi] : cover) {
    const double a = std::max(lo, span.first), b = std::min(hi, span.second);
    if (b > a) exposed -= b - a;
  }
  return std::max(0.0, exposed);
}

std::vector<Interval> merged(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const auto& iv : intervals) {
    if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
    else out.push_back(iv);
  }
  return out;
}

}  // namespace

CostFigures cost_figures(const Scenario& scenario, const sched::TimedRun& run, std::uint32_t iterations,
                         bool separate_amax_comm) {
  CostFigures figures;
  const double iters = std::max<std::uint32_t>(iterations, 1);
  figures.iteration_time_us = run.makespan_us / iters;
  const std::size_t ranks = scenario.ranks.size();
  std::vector<std::vector<Interval>> kernels(ranks);
  for (const auto& op : run.ops) {
    if (op.executed && is_compute_kernel(op.kind)) kernels[op.op.rank].emplace_back(op.start_us, op.end_us);
  }
  for (auto& k : kernels) k = merged(std::move(k));
  double exposed = 0, queued = 0;
  // The end of the previous op on each (rank, stream): when the stream itself was ready.
  std::map<std::pair<RankId, StreamId>, double> stream_ready;
  for (const auto& op : run.ops) {
    if (!op.executed) continue;
    const Op& model = scenario.ranks[op.op.rank].threads[op.op.thread].program[op.op.index];
    if (!is_device_op(model.kind)) continue;
    double& ready = stream_ready[{op.op.rank, model.stream}];
    if (is_amax_reduction(op)) {
      exposed += uncovered({op.start_us, op.end_us}, kernels[op.op.rank]);
      // Ready on its stream and issued, yet not started: held back by the collectives ahead of
      // it on the communicator (gradient buckets on a shared one) or by serialized kernels.
      queued += std::max(0.0, op.start_us - std::max(ready, op.issue_end_us));
    }
    ready = std::max(ready, op.end_us);
  }
  const double per = iters * static_cast<double>(std::max<std::size_t>(ranks, 1));
  figures.exposed_amax_latency_us = exposed / per;
  figures.amax_queued_us = queued / per;
  figures.extra_comm_memory_bytes = separate_amax_comm ? (1ull << 30) : 0;
  return figures;
}

}  // namespace amaxcheck::cli
