#include "scheduler/timed_strategy.h"

#include <algorithm>

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
  const std::size_t ranks = scenario.ranks.size();
  timing_index_.resize(ranks);
  std::size_t actors = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    const Rank& rank = scenario.ranks[r];
    timing_index_[r].resize(rank.threads.size());
    for (std::size_t t = 0; t < rank.threads.size(); ++t) timing_index_[r][t].assign(rank.threads[t].program.size(), -1);
    thread_base_.push_back(actors);
    actors += rank.threads.size();
    stream_base_.push_back(actors);
    actors += rank.streams.size();
  }
  comm_base_ = actors;
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
  // Contention: the most collectives of other communicators still running on one member.
  std::size_t sharing = 0;
  const std::vector<OpRef> members = engine_->joined_members(comm);
  for (const OpRef& member : members) {
    std::vector<Running>& running = running_[member.rank];
    std::erase_if(running, [&](const Running& r) { return r.end_us <= last_end_us_; });  // ended: never overlaps again
    std::size_t here = 0;
    for (const Running& r : running) here += r.comm != comm && r.end_us > start ? 1 : 0;
    sharing = std::max(sharing, here);
  }
  const double duration = cost.latency_us + cost.transfer_us * static_cast<double>(sharing + 1);
  for (const OpRef& member : members) running_[member.rank].push_back(Running{start + duration, comm});
  return duration;
}

void TimedStrategy::price(ActorState& actor, const Action& action) {
  AMAX_CHECK(engine_ != nullptr, "timed run: pick() before attach() (run it through run_once)");
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

std::size_t TimedStrategy::pick(ChoiceKind, std::span<const Action> options) {
  // An action offered at the previous pick too, other than the one that ran, keeps its price.
  const std::uint64_t previous = picks_ - 1;
  std::size_t best = 0;
  std::size_t best_actor = 0;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::size_t index = actor_index(options[i]);
    ActorState& actor = actors_[index];
    if (picks_ == 0 || actor.seen_at != previous || !(actor.action == options[i])) price(actor, options[i]);
    actor.seen_at = picks_;
    if (i == 0 || actor.end_us < actors_[best_actor].end_us) {
      best = i;
      best_actor = index;
    }
  }
  ++picks_;
  const ActorState& chosen = actors_[best_actor];
  if (options[best].kind == ActionKind::complete) picked_members_ = engine_->joined_members(options[best].lane);
  picked_actor_ = best_actor;
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
  ActorState& actor = actors_[picked_actor_];
  actor.lane_free_us = end;
  actor.seen_at = ~std::uint64_t{0};  // its next action is priced afresh
  last_end_us_ = end;
  run_.steps.push_back(StepTiming{start, end});
  run_.makespan_us = std::max(run_.makespan_us, end);
}

}  // namespace amaxcheck::sched
