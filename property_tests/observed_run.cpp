#include "observed_run.h"

#include <fmt/format.h>

#include <cstdio>
#include <limits>

#include "protocols/protocol.h"
#include "util/check.h"

namespace amaxcheck::props {
namespace {

using Buffers = std::vector<std::vector<std::vector<float>>>;  // [rank][buffer]

Buffers initial_buffers(const Scenario& s) {
  Buffers buffers(s.ranks.size());
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    for (const Buffer& b : s.ranks[r].buffers) {
      std::vector<float> values(b.size, 0.0f);
      for (std::size_t i = 0; i < b.init.size() && i < values.size(); ++i) values[i] = b.init[i];
      buffers[r].push_back(std::move(values));
    }
  }
  return buffers;
}

std::vector<float> slice(const Buffers& buffers, RankId rank, const Range& range) {
  const auto& b = buffers.at(rank).at(range.buffer);
  return {b.begin() + range.offset, b.begin() + range.offset + range.count};
}

/// "m3.bwd.amax_history" -> module 3, direction 1. False for any other buffer.
bool parse_history_name(const std::string& name, std::uint32_t& module, std::uint32_t& dir) {
  unsigned m = 0;
  char tag[4] = {};
  int end = 0;
  if (std::sscanf(name.c_str(), "m%u.%3[a-z].amax_history%n", &m, tag, &end) != 2) return false;
  if (static_cast<std::size_t>(end) != name.size()) return false;
  module = m;
  dir = std::string(tag) == "bwd" ? 1 : 0;
  return true;
}

}  // namespace

std::string ObservedRun::describe_hazards() const {
  if (run.hazards.empty()) return "no hazards";
  std::string text;
  for (const Hazard& h : run.hazards) {
    text += fmt::format("{}: {}\n", to_string(h.kind), h.summary);
    for (const Participant& p : h.participants) {
      text += fmt::format("    rank {} {} op {}:{} {} [{}]\n", p.rank, p.lane, p.op.thread, p.op.index, p.op_name, p.origin);
    }
  }
  return text;
}

std::unique_ptr<sched::Strategy> make_strategy(const Scenario& scenario, const Schedule& schedule) {
  sched::ExploreOptions options;
  options.strategy = schedule.strategy;
  options.seed = schedule.seed;
  options.args.set("depth", schedule.depth);
  std::unique_ptr<sched::Strategy> strategy = sched::make_strategy(scenario, options);
  AMAX_CHECK(strategy->begin_run(0), "a schedule is run 0 of its exploration");
  return strategy;
}

ObservedRun observe(Scenario scenario, const Schedule& schedule, const EngineOptions& engine, Values values) {
  ObservedRun out;
  out.scenario = std::move(scenario);
  const Scenario& s = out.scenario;
  sched::RunOptions options;
  options.engine = engine;
  if (values == Values::all) options.engine.record_values_up_to = std::numeric_limits<std::size_t>::max();
  options.record_steps = true;
  auto strategy = make_strategy(s, schedule);
  out.schedule = schedule;
  out.engine = options.engine;
  out.strategy_name = strategy->name();
  out.strategy_parameters = strategy->parameters();
  out.run = sched::run_once(s, *strategy, options);

  if (values != Values::all) return out;
  Buffers buffers = initial_buffers(s);
  for (const Step& step : out.run.steps) {
    const Op* update = nullptr;
    if (step.action.kind == ActionKind::execute) {
      const Op& op = s.ranks[step.op.rank].threads[step.op.thread].program[step.op.index];
      if (op.kind == OpKind::scale_update) update = &op;
    }
    std::vector<float> consumed;
    if (update) consumed = slice(buffers, step.op.rank, update->writes.at(0));
    for (const WrittenValues& w : step.written) {
      auto& b = buffers.at(w.rank).at(w.range.buffer);
      AMAX_CHECK(w.values.size() == w.range.count, "a step recorded fewer values than it wrote");
      std::copy(w.values.begin(), w.values.end(), b.begin() + w.range.offset);
    }
    if (!update) continue;
    const Range& history = update->writes.at(0);
    std::uint32_t module = 0, dir = 0;
    if (!parse_history_name(s.ranks[step.op.rank].buffers[history.buffer].name, module, dir)) continue;
    UpdateRecord rec;
    rec.consumed = std::move(consumed);
    rec.history = slice(buffers, step.op.rank, history);
    rec.scale = slice(buffers, step.op.rank, update->writes.at(1));
    rec.scale_inv = slice(buffers, step.op.rank, update->writes.at(2));
    out.updates[UpdateKey{step.op.rank, module, dir, history.offset}].push_back(std::move(rec));
  }
  out.final_buffers = std::move(buffers);
  return out;
}

ObservedRun observe(const ProtocolCase& c, const EngineOptions& engine, Values values) {
  return observe(build_protocol(c.knobs), c.schedule, engine, values);
}

}  // namespace amaxcheck::props
