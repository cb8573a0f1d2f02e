#include "scheduler/timed_strategy.h"

#include <algorithm>

#include "scheduler/explore.h"
#include "util/check.h"

namespace amaxcheck::sched {

TimedStrategy::TimedStrategy(const Scenario& scenario, CostModel cost) : scenario_(scenario), cost_(cost) {
  const std::size_t ranks = scenario.ranks.size();
  timing_index_.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    const Rank& rank = scenario.ranks[r];
    timing_index_[r].resize(rank.threads.size());
    for (std::size_t t = 0; t < rank.threads.size(); ++t) timing_index_[r][t].assign(rank.threads[t].program.size(), -1);
  }
  run_.rank_end_us.assign(ranks, 0.0);
}

nlohmann::ordered_json TimedStrategy::parameters() const {
  nlohmann::ordered_json params;
  params["cost_model"] = cost_.to_json();
  return params;
}

const Op& TimedStrategy::op_at(const OpRef& ref) const {
  AMAX_CHECK(ref.rank < scenario_.ranks.size() && ref.thread < scenario_.ranks[ref.rank].threads.size() &&
                 ref.index < scenario_.ranks[ref.rank].threads[ref.thread].program.size(),
             "timed run: a step names an op that does not exist");
  return scenario_.ranks[ref.rank].threads[ref.thread].program[ref.index];
}

double TimedStrategy::duration_us(const Action& action) const {
  AMAX_CHECK(engine_ != nullptr, "timed run: pick() before attach() (run it through run_once)");
  const Op* op = engine_->pending_op(action);
  if (op == nullptr) return 0.0;
  switch (action.kind) {
    case ActionKind::issue: return cost_.issue_us(*op);
    case ActionKind::execute: return cost_.execute_us(*op);
    case ActionKind::join: return 0.0;
    case ActionKind::complete: return cost_.collective_us(*op, scenario_.comms[action.lane].members.size());
  }
  return 0.0;
}

double TimedStrategy::lane_free_us(std::uint64_t actor) const {
  for (const auto& [key, time] : lane_free_) {
    if (key == actor) return time;
  }
  return 0.0;
}

OpTiming& TimedStrategy::timing_of(const OpRef& ref) {
  std::int64_t& index = timing_index_[ref.rank][ref.thread][ref.index];
  if (index < 0) {
    const Op& op = op_at(ref);
    index = static_cast<std::int64_t>(run_.ops.size());
    run_.ops.push_back(OpTiming{ref, op.name, op.kind, op.origin, 0, 0, 0, 0, false});
  }
  return run_.ops[static_cast<std::size_t>(index)];
}

std::size_t TimedStrategy::pick(ChoiceKind, std::span<const Action> options) {
  const bool have_last = !run_.steps.empty();
  enabled_at_.assign(options.size(), last_end_us_);
  std::size_t best = 0;
  double best_start = 0;
  double best_end = 0;
  for (std::size_t i = 0; i < options.size(); ++i) {
    // An action enabled before the last step, other than the one that ran, keeps its time.
    for (std::size_t p = 0; p < previous_options_.size(); ++p) {
      if (previous_options_[p] == options[i] && !(have_last && p == picked_)) enabled_at_[i] = previous_enabled_at_[p];
    }
    const double start = std::max(enabled_at_[i], lane_free_us(actor_key(options[i])));
    const double end = start + duration_us(options[i]);
    if (i == 0 || end < best_end) {
      best = i;
      best_start = start;
      best_end = end;
    }
  }
  previous_options_.assign(options.begin(), options.end());
  previous_enabled_at_ = enabled_at_;
  picked_ = best;
  if (options[best].kind == ActionKind::complete) picked_members_ = engine_->joined_members(options[best].lane);
  picked_start_us_ = best_start;
  picked_end_us_ = best_end;
  return best;
}

void TimedStrategy::on_step(const Step& step) {
  const double start = picked_start_us_;
  const double end = picked_end_us_;
  const Action& action = step.action;
  auto touch_rank = [&](RankId rank) { run_.rank_end_us[rank] = std::max(run_.rank_end_us[rank], end); };
  switch (action.kind) {
    case ActionKind::issue: {
      OpTiming& timing = timing_of(step.op);
      timing.issue_start_us = start;
      timing.issue_end_us = end;
      if (is_host_op(op_at(step.op).kind)) {
        timing.start_us = start;
        timing.end_us = end;
        timing.executed = true;
      }
      touch_rank(action.rank);
      break;
    }
    case ActionKind::execute: {
      OpTiming& timing = timing_of(step.op);
      timing.start_us = start;
      timing.end_us = end;
      timing.executed = true;
      touch_rank(action.rank);
      break;
    }
    case ActionKind::join:
      timing_of(step.op).start_us = start;
      touch_rank(action.rank);
      break;
    case ActionKind::complete:
      for (const OpRef& member : picked_members_) {
        OpTiming& timing = timing_of(member);
        timing.end_us = end;
        timing.executed = true;
        touch_rank(member.rank);
      }
      break;
  }
  const std::uint64_t actor = actor_key(action);
  bool found = false;
  for (auto& [key, time] : lane_free_) {
    if (key == actor) {
      time = end;
      found = true;
    }
  }
  if (!found) lane_free_.emplace_back(actor, end);
  last_end_us_ = end;
  run_.steps.push_back(StepTiming{start, end});
  run_.makespan_us = std::max(run_.makespan_us, end);
}

void TimedStrategy::end_run(const RunResult& run) { keep_timing_ = run.outcome != RunOutcome::step_limit; }

void TimedStrategy::report(ExploreResult& result) const {
  if (keep_timing_) result.timing = run_;
}

namespace {
constexpr StrategyParam params[] = {
    {"launch-us", ParamType::number, "4", "host cost of launching a device op"},
    {"kernel-us", ParamType::number, "10", "default kernel duration (fill, cast)"},
    {"alpha-us", ParamType::number, "8", "per-collective latency"},
    {"bus-gbps", ParamType::positive_number, "100", "collective bus bandwidth in GB/s"},
    {"collective-algo", ParamType::choice, "ring", "ring | tree", "ring|tree"},
};
}  // namespace

std::span<const StrategyParam> timed_params() { return params; }

std::unique_ptr<Strategy> make_timed_strategy(const StrategySetup& setup) {
  CostModel cost;
  cost.launch_overhead_us = setup.number("launch-us");
  cost.kernel_default_us = setup.number("kernel-us");
  cost.alpha_us = setup.number("alpha-us");
  cost.beta_us_per_byte = 1.0 / (setup.number("bus-gbps") * 1000.0);
  cost.algo = setup.choice("collective-algo") == "tree" ? CollectiveAlgo::tree : CollectiveAlgo::ring;
  return std::make_unique<TimedStrategy>(setup.scenario, cost);
}

}  // namespace amaxcheck::sched
