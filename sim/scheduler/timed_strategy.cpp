#include "scheduler/timed_strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "scheduler/explore.h"
#include "util/check.h"

namespace amaxcheck::sched {

std::vector<std::uint32_t> nodes_of_ranks(const Scenario& scenario) {
  std::vector<std::uint32_t> nodes(scenario.ranks.size(), 0);
  for (std::size_t r = 1; r < scenario.ranks.size(); ++r) {
    const bool next_node = scenario.ranks[r].device <= scenario.ranks[r - 1].device;
    nodes[r] = nodes[r - 1] + (next_node ? 1 : 0);
  }
  return nodes;
}

TimedStrategy::TimedStrategy(const Scenario& scenario, CostModel cost) : scenario_(scenario), cost_(cost) {
  run_.cost = cost_;
  const std::size_t ranks = scenario.ranks.size();
  timing_index_.resize(ranks);
  std::size_t actors = 0, ops = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    const Rank& rank = scenario.ranks[r];
    timing_index_[r].resize(rank.threads.size());
    for (std::size_t t = 0; t < rank.threads.size(); ++t) {
      timing_index_[r][t].assign(rank.threads[t].program.size(), -1);
      ops += rank.threads[t].program.size();
    }
    thread_base_.push_back(actors);
    actors += rank.threads.size();
    stream_base_.push_back(actors);
    actors += rank.streams.size();
  }
  comm_base_ = actors;
  run_.ops.reserve(ops);  // every op gets its timing once: no regrowth moving the names
  actors_.resize(actors + scenario.comms.size());
  run_.rank_end_us.assign(ranks, 0.0);
  run_.rank_node = nodes_of_ranks(scenario);
  for (const Communicator& comm : scenario.comms) {
    std::vector<std::uint32_t> nodes;
    for (RankId member : comm.members) {
      if (member < ranks) nodes.push_back(run_.rank_node[member]);
    }
    std::sort(nodes.begin(), nodes.end());
    comm_nodes_.push_back(static_cast<std::size_t>(std::unique(nodes.begin(), nodes.end()) - nodes.begin()));
  }
  running_.resize(ranks);
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

std::size_t TimedStrategy::actor_index(const Action& action) const {
  // The same actors as actor_key: a thread (issue), a stream (execute, join) or a comm.
  std::size_t index = 0;
  switch (action.kind) {
    case ActionKind::issue: index = thread_base_.at(action.rank) + action.lane; break;
    case ActionKind::execute:
    case ActionKind::join: index = stream_base_.at(action.rank) + action.lane; break;
    case ActionKind::complete: index = comm_base_ + action.lane; break;
  }
  AMAX_CHECK(index < actors_.size(), "timed run: an action names a lane the scenario does not have");
  return index;
}

double TimedStrategy::complete_us(const Action& action, double start) {
  const Op* op = engine_->pending_op(action);
  if (op == nullptr) return 0.0;
  const CommId comm = action.lane;
  const CollectiveCost cost = cost_.collective(*op, scenario_.comms[comm].members.size(), comm_nodes_[comm]);
  // Contention: while two collectives transfer at once on a rank, each gets half its bandwidth,
  // so this one's transfer is delayed by the others' transfer time still to go (at most its
  // own), on the member where that is largest.
  double delay = 0;
  const std::vector<OpRef> members = engine_->joined_members(comm);
  for (const OpRef& member : members) {
    std::vector<Running>& running = running_[member.rank];
    std::erase_if(running, [&](const Running& r) { return r.end_us <= last_end_us_; });  // ended: never overlaps again
    double here = 0;
    for (const Running& r : running) {
      if (r.comm != comm) here += std::min(cost.transfer_us, std::clamp(r.end_us - start, 0.0, r.transfer_us));
    }
    delay = std::max(delay, here);
  }
  const double duration = cost.latency_us + cost.transfer_us + delay;
  for (const OpRef& member : members) running_[member.rank].push_back(Running{start + duration, cost.transfer_us, comm});
  return duration;
}

void TimedStrategy::price(ActorState& actor, const Action& action) {
  actor.action = action;
  actor.start_us = std::max(last_end_us_, actor.lane_free_us);
  double duration = 0;
  switch (action.kind) {
    case ActionKind::issue:
      if (const Op* op = engine_->pending_op(action)) duration = cost_.issue_us(*op);
      break;
    case ActionKind::execute:
      if (const Op* op = engine_->pending_op(action)) duration = cost_.execute_us(*op);
      break;
    case ActionKind::join: break;
    case ActionKind::complete: duration = complete_us(action, actor.start_us); break;
  }
  actor.end_us = actor.start_us + duration;
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

namespace {

/// The engine's canonical order of enabled actions as one number: rank actions rank by rank
/// (issues by thread, then stream actions by stream), then completions by communicator.
std::uint64_t canonical_order(const Action& a) {
  if (a.kind == ActionKind::complete) return (std::uint64_t{1} << 62) | (static_cast<std::uint64_t>(a.lane) << 32);
  const std::uint64_t stream_action = a.kind == ActionKind::issue ? 0 : 1;
  return (static_cast<std::uint64_t>(a.rank) << 32) | (stream_action << 31) | a.lane;
}

/// The options whose canonical order is in [lo, hi): one binary search for the first, then a
/// walk (a rank's or a communicator's block is a few actions).
std::span<const Action> range_of(std::span<const Action> options, std::uint64_t lo, std::uint64_t hi) {
  auto key_less = [](const Action& a, std::uint64_t key) { return canonical_order(a) < key; };
  const auto first = std::lower_bound(options.begin(), options.end(), lo, key_less);
  auto last = first;
  while (last != options.end() && canonical_order(*last) < hi) ++last;
  return {first, last};
}

}  // namespace

void TimedStrategy::offer(std::size_t index, const Action& action) {
  ActorState& actor = actors_[index];
  actor.touched = refreshes_;
  // Offered before this step and not the one that ran (on_step disabled that one): keeps its price.
  if (actor.enabled && actor.action == action) return;
  price(actor, action);
  actor.enabled = true;
  ++actor.generation;
  heap_.push(Candidate{actor.end_us, canonical_order(action), static_cast<std::uint32_t>(index), actor.generation});
}

void TimedStrategy::refresh_block(std::span<const Action> block, std::size_t first, std::size_t last) {
  for (const Action& action : block) offer(actor_index(action), action);
  for (std::size_t i = first; i < last; ++i) {
    ActorState& actor = actors_[i];
    if (actor.enabled && actor.touched != refreshes_) {
      actor.enabled = false;
      ++actor.generation;
    }
  }
}

std::size_t TimedStrategy::pick(ChoiceKind, std::span<const Action> options) {
  AMAX_CHECK(engine_ != nullptr, "timed run: pick() before attach() (run it through run_once)");
  ++refreshes_;
  if (!primed_) {
    for (const Action& action : options) offer(actor_index(action), action);
    primed_ = true;
  } else {
    const Engine::Refreshed refreshed = engine_->last_refreshed();
    for (RankId r : refreshed.ranks) {
      const std::uint64_t lo = static_cast<std::uint64_t>(r) << 32, hi = static_cast<std::uint64_t>(r + 1) << 32;
      refresh_block(range_of(options, lo, hi), thread_base_[r], r + 1 < stream_base_.size() ? thread_base_[r + 1] : comm_base_);
    }
    if (refreshed.comm) {
      const std::uint64_t lo = canonical_order(Action{ActionKind::complete, 0, *refreshed.comm});
      const std::size_t actor = comm_base_ + *refreshed.comm;
      refresh_block(range_of(options, lo, lo + (std::uint64_t{1} << 32)), actor, actor + 1);
    }
  }
  // The earliest end among the offered actions; entries whose actor moved on are dropped.
  while (!heap_.empty()) {
    const Candidate& top = heap_.top();
    const ActorState& actor = actors_[top.actor];
    if (actor.enabled && actor.generation == top.generation) break;
    heap_.pop();
  }
  AMAX_CHECK(!heap_.empty(), "timed run: options the strategy never priced");
  const std::size_t chosen_actor = heap_.top().actor;
  const ActorState& chosen = actors_[chosen_actor];
  const auto it = std::lower_bound(options.begin(), options.end(), canonical_order(chosen.action),
                                   [](const Action& a, std::uint64_t key) { return canonical_order(a) < key; });
  AMAX_CHECK(it != options.end() && *it == chosen.action, "timed run: the priced action is not among the options");
  const std::size_t best = static_cast<std::size_t>(it - options.begin());
  if (chosen.action.kind == ActionKind::complete) picked_members_ = engine_->joined_members(chosen.action.lane);
  picked_actor_ = chosen_actor;
  picked_start_us_ = chosen.start_us;
  picked_end_us_ = chosen.end_us;
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
      if (completes_at_issue(op_at(step.op))) {
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
  ActorState& actor = actors_[picked_actor_];
  actor.lane_free_us = end;
  actor.enabled = false;  // its next action is priced afresh
  ++actor.generation;
  last_end_us_ = end;
  run_.steps.push_back(StepTiming{start, end});
  run_.makespan_us = std::max(run_.makespan_us, end);
}

void TimedStrategy::end_run(const RunResult& run) {
  keep_timing_ = run.outcome != RunOutcome::step_limit;
  run_.finished = run.outcome == RunOutcome::finished;
}

void TimedStrategy::report(ExploreResult& result) const {
  if (keep_timing_) result.timing = run_;
}

namespace {
constexpr StrategyParam params[] = {
    {"launch-us", ParamType::number, "4", "host cost of launching a device op"},
    {"kernel-us", ParamType::number, "10", "default kernel duration (fill, cast)"},
    {"topology", ParamType::choice, "h100-8x-nvlink-ib400",
     "the machine (GPUs per node: --ranks-per-node): h100-8x-nvlink-ib400 | h200-8x-nvlink-ib400 | pcie | flat",
     "h100-8x-nvlink-ib400|h200-8x-nvlink-ib400|pcie|flat"},
    {"channels", ParamType::count, "0", "NCCL channels per communicator (0 = the preset's)"},
    {"collective-algo", ParamType::choice, "auto",
     "auto (the fastest, as NCCL's tuner picks) | ring | tree | nvls (as NCCL_ALGO)", "auto|ring|tree|nvls"},
    {"comm-init", ParamType::choice, "split",
     "how the separate amax communicator is made, for its memory: split-shared | split | fresh",
     "split-shared|split|fresh"},
    {"alpha-us", ParamType::number, "-1", "flat model: per-collective latency (default 8; selects --topology flat)",
     "", false},
    {"bus-gbps", ParamType::number, "-1", "flat model: bus bandwidth in GB/s (default 100; selects --topology flat)",
     "", false},
};

/// A duration or a rate of the cost model: finite and not negative (NaN and inf made every
/// figure NaN or inf; a negative kernel ran backwards in time). `unset`: the parameter's
/// default that means "not given", allowed as it is.
double cost_param(const StrategySetup& setup, const char* name, std::optional<double> unset = std::nullopt) {
  const double value = setup.number(name);
  if (unset && value == *unset) return value;
  if (!(value >= 0) || !std::isfinite(value)) {
    throw InputError(fmt::format("--{}: expected a finite number >= 0, got {}", name, value));
  }
  return value;
}

/// The cost model the parameters describe. --alpha-us / --bus-gbps (the older flat model's)
/// select the flat topology unless another is named.
CostModel cost_model_of(const StrategySetup& setup) {
  CostModel cost;
  cost.launch_overhead_us = cost_param(setup, "launch-us");
  cost.kernel_default_us = cost_param(setup, "kernel-us");
  const double alpha_us = cost_param(setup, "alpha-us", -1.0);
  const double bus_gbps = cost_param(setup, "bus-gbps", -1.0);
  const bool flat_knobs = alpha_us >= 0 || bus_gbps >= 0;
  std::string topology = setup.choice("topology");
  if (flat_knobs && topology == params[2].default_value) topology = "flat";
  const std::optional<Topology> preset = topology_preset(topology);
  AMAX_CHECK(preset.has_value(), "every --topology choice names a preset");
  if (flat_knobs && !preset->flat) throw InputError("--alpha-us and --bus-gbps belong to --topology flat");
  cost.topology = *preset;
  if (const std::uint64_t channels = setup.count("channels"); channels > 0) {
    if (channels > UINT32_MAX) throw InputError(fmt::format("--channels: expected at most {}, got {}", UINT32_MAX, channels));
    cost.topology.channels = static_cast<std::uint32_t>(channels);
  }
  if (alpha_us >= 0) cost.alpha_us = alpha_us;
  if (bus_gbps >= 0) {
    if (!(bus_gbps > 0)) throw InputError(fmt::format("--bus-gbps: expected a positive number, got \"{}\"", bus_gbps));
    cost.beta_us_per_byte = 1.0 / (bus_gbps * 1000.0);
  }
  const std::string algo = setup.choice("collective-algo");
  if (algo == "ring") cost.algo = CollectiveAlgo::ring;
  if (algo == "tree") cost.algo = CollectiveAlgo::tree;
  if (algo == "nvls") {
    if (preset->flat) throw InputError("--collective-algo: expected auto|ring|tree with --topology flat, got \"nvls\"");
    cost.algo = CollectiveAlgo::nvls;
  }
  const std::string init = setup.choice("comm-init");
  cost.comm_init = init == "split-shared" ? CommInit::split_shared : init == "fresh" ? CommInit::fresh : CommInit::split;
  return cost;
}
}  // namespace

std::span<const StrategyParam> timed_params() { return params; }

std::unique_ptr<Strategy> make_timed_strategy(const StrategySetup& setup) {
  return std::make_unique<TimedStrategy>(setup.scenario, cost_model_of(setup));
}

}  // namespace amaxcheck::sched
