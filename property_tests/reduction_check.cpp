#include "reduction_check.h"

#include <fmt/format.h>

#include <bit>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/builder.h"
#include "scheduler/run.h"

namespace amaxcheck::props {
namespace {

/// What a search saw: whether it covered everything, its hazards and its end states.
struct Seen {
  bool complete = false;
  std::uint64_t schedules = 0;
  std::set<std::string> hazards;
  std::set<std::string> end_states;
};

/// The end state of a run: the last values written to each range, and how the run ended.
std::string end_state(const sched::RunResult& run) {
  std::map<std::tuple<RankId, BufferId, std::uint32_t, std::uint32_t>, std::vector<float>> last;
  for (const Step& step : run.steps) {
    for (const WrittenValues& w : step.written) last[{w.rank, w.range.buffer, w.range.offset, w.range.count}] = w.values;
  }
  std::string out = to_string(run.outcome);
  for (const auto& [where, values] : last) {
    // Bits, not values: -0 and +0, and NaN payloads, count as different.
    std::vector<std::uint32_t> bits;
    for (float v : values) bits.push_back(std::bit_cast<std::uint32_t>(v));
    out += fmt::format(";{}.{}[{}+{}]={}", std::get<0>(where), std::get<1>(where), std::get<2>(where), std::get<3>(where),
                       fmt::join(bits, ","));
  }
  return out;
}

Seen search(const Scenario& scenario, const sched::ExhaustiveOptions& options) {
  sched::ExhaustiveSearch search(options);
  sched::RunOptions run_options;
  run_options.record_steps = true;
  Seen seen;
  for (std::uint64_t i = 0; search.begin_run(i); ++i) {
    const sched::RunResult run = sched::run_once(scenario, search, run_options);
    search.end_run(run);
    if (run.outcome == sched::RunOutcome::stopped) continue;  // abandoned: covered elsewhere
    ++seen.schedules;
    for (const Hazard& h : run.hazards) seen.hazards.insert(h.key());
    seen.end_states.insert(end_state(run));
  }
  seen.complete = search.stats().complete;
  return seen;
}

std::string listed(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += "\n    " + item;
  return out.empty() ? " (none)" : out;
}

}  // namespace

namespace {

/// One op for the check's programs: buffer kernels on two streams, events, every host
/// synchronization, host flags, all-reduces and send / recv (grouped or not), weighted towards what interleaves (two streams
/// sharing buffers, syncs against issues of another thread, collectives across ranks).
Op reduction_op(RankId rank, RankId ranks, BufferId x, BufferId y, CommId all, CommId pair) {
  const StreamId stream = *rc::gen::inRange<StreamId>(0, 2);
  const EventId event = 0;
  const Range rx{x, 0, 1}, ry{y, 0, 1};
  switch (*rc::gen::weightedElement<int>({{3, 0}, {2, 1}, {2, 2}, {1, 3}, {2, 4}, {1, 5}, {1, 6}, {2, 7}, {1, 8}, {1, 9}, {2, 10}})) {
    case 0: return ScenarioBuilder::fill(stream, *rc::gen::element(rx, ry), {*rc::gen::element(1.0f, 2.0f)});
    case 1: {
      const auto [from, to] = *rc::gen::element(std::pair{rx, ry}, std::pair{ry, rx});
      return ScenarioBuilder::copy(stream, from, to);
    }
    case 2: return ScenarioBuilder::host(OpKind::stream_synchronize, stream);
    case 3: return ScenarioBuilder::host(OpKind::device_synchronize);
    case 4: return ScenarioBuilder::record(stream, event);
    case 5: return ScenarioBuilder::wait(stream, event);
    case 6: return ScenarioBuilder::host(OpKind::event_synchronize, event);
    case 7: {
      const CommId comm = rank < 2 ? *rc::gen::element(all, pair) : all;
      return ScenarioBuilder::all_reduce(stream, comm, rx, *rc::gen::element(rx, ry));
    }
    case 8: return ScenarioBuilder::host(OpKind::host_signal, 0);
    case 10: {
      // Point-to-point on `all` (member index = rank), sometimes in a group with its neighbour.
      const auto peer = *rc::gen::inRange<std::uint32_t>(0, ranks);
      const auto group = *rc::gen::element(0u, 1u);
      if (*rc::gen::arbitrary<bool>()) return ScenarioBuilder::send(stream, all, peer, rx, "send", group);
      return ScenarioBuilder::recv(stream, all, peer, *rc::gen::element(rx, ry), "recv", group);
    }
    default: {
      Op op = ScenarioBuilder::host(OpKind::host_wait, 0);
      op.count = 1;
      return op;
    }
  }
}

}  // namespace

rc::Gen<Scenario> scenario_for_reduction_check(int max_total_ops) {
  return rc::gen::exec([max_total_ops] {
    ScenarioBuilder b("reduction check");
    b.kernels(*rc::gen::element(KernelConcurrency::concurrent, KernelConcurrency::serialized));
    const RankId ranks = *rc::gen::inRange<RankId>(1, 4);
    std::vector<RankId> everyone;
    std::vector<std::pair<BufferId, BufferId>> buffers;
    for (RankId r = 0; r < ranks; ++r) {
      everyone.push_back(b.rank());
      b.stream(r, "s0");
      b.stream(r, "s1");
      b.event(r, "e0");
      b.flag(r, "f0");
      buffers.emplace_back(b.buffer(r, "x", 1, {static_cast<float>(r)}), b.buffer(r, "y", 1));
    }
    const CommId all = b.comm("all", everyone);
    const CommId pair = b.comm("pair", ranks >= 2 ? std::vector<RankId>{0, 1} : everyone);
    // Threads first (1-2 per rank), then the ops dealt out to random threads.
    std::vector<std::pair<RankId, ThreadId>> threads;
    for (RankId r = 0; r < ranks; ++r) {
      const int count = *rc::gen::weightedElement<int>({{1, 1}, {2, 2}});
      for (int t = 0; t < count; ++t) threads.emplace_back(r, b.thread(r, fmt::format("t{}", t)));
    }
    const int ops = *rc::gen::inRange(1, max_total_ops + 1);
    for (int i = 0; i < ops; ++i) {
      const auto [r, t] = *rc::gen::elementOf(threads);
      b.op(r, t, reduction_op(r, ranks, buffers[r].first, buffers[r].second, all, pair));
    }
    return b.build();
  });
}

bool long_suite() { return std::getenv("AMAXCHECK_LONG") != nullptr; }

int reduction_check_size() { return long_suite() ? 7 : 5; }

std::uint64_t reduction_check_naive_cap() { return long_suite() ? 300'000 : 20'000; }

ReductionComparison compare_with_naive_search(const Scenario& scenario, const sched::ExhaustiveOptions& reduced,
                                              std::uint64_t naive_cap) {
  sched::ExhaustiveOptions naive;
  naive.reduction = false;
  naive.max_schedules = naive_cap;
  const Seen all = search(scenario, naive);
  ReductionComparison out;
  out.naive_complete = all.complete;
  out.naive_hazards = all.hazards.size();
  out.naive_end_states = all.end_states.size();
  if (!all.complete) return out;  // too many interleavings for the plain search: nothing to compare with
  const Seen some = search(scenario, reduced);
  if (!some.complete) {
    out.disagreement = fmt::format("the reduced search did not complete ({} schedules)", some.schedules);
  } else if (some.hazards != all.hazards) {
    out.disagreement = fmt::format("the reduced search ({} schedules) reports{}\nbut the naive search ({} schedules) reports{}",
                                   some.schedules, listed(some.hazards), all.schedules, listed(all.hazards));
  } else if (some.end_states != all.end_states) {
    out.disagreement = fmt::format("the reduced search ({} schedules) reaches {} end states, the naive search ({} schedules) {}",
                                   some.schedules, some.end_states.size(), all.schedules, all.end_states.size());
  } else if (some.schedules > all.schedules) {
    out.disagreement = fmt::format("the reduced search took {} schedules, more than the naive search's {}", some.schedules,
                                   all.schedules);
  }
  return out;
}

void check_reduction_matches_naive_search(const sched::ExhaustiveOptions& reduced) {
  const Scenario scenario = *scenario_for_reduction_check(reduction_check_size());
  const ReductionComparison compared = compare_with_naive_search(scenario, reduced, reduction_check_naive_cap());
  RC_PRE(compared.naive_complete);
  RC_TAG(compared.naive_hazards == 0 ? "clean" : "hazard");
  if (!compared.disagreement.empty()) RC_FAIL(compared.disagreement);
}

}  // namespace amaxcheck::props
