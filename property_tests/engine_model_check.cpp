#include "engine_model_check.h"

#include <fmt/format.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "failure_report.h"
#include "generators.h"
#include "model/builder.h"
#include "sequential_reference.h"
#include "stream_model.h"

namespace amaxcheck::props {
namespace {

struct Buffers {
  BufferId x = 0, y = 0, history = 0, scale = 0, scale_inv = 0;
};

/// One op of `kind` (gen_ops' numbering, 0 to 11).
Op gen_op(int kind, RankId rank, const Buffers& b, CommId all, CommId pair, StreamId stream, EventId event) {
  const Range x{b.x, 0, 2}, y{b.y, 0, 2}, history{b.history, 0, 2};
  switch (kind) {
    case 0: {
      const Range to = *rc::gen::element(x, y, history);
      return ScenarioBuilder::fill(stream, to, *rc::gen::container<std::vector<float>>(2, special_float()));
    }
    case 1: {
      const auto [from, to] = *rc::gen::element(std::pair{x, y}, std::pair{y, x}, std::pair{x, history});
      return ScenarioBuilder::copy(stream, from, to);
    }
    case 2: {
      Op op = ScenarioBuilder::copy(stream, *rc::gen::element(x, y), Range{b.history, 0, 1}, "local_amax");
      op.kind = OpKind::local_amax;
      return op;
    }
    case 3: {
      Op op = ScenarioBuilder::copy(stream, history, history, "scale_update");
      op.kind = OpKind::scale_update;
      op.scale = ScaleUpdateParams{1, 2, *rc::gen::element(HistoryAlgo::max, HistoryAlgo::most_recent),
                                   *rc::gen::inRange(0, 3), *rc::gen::element(Fp8Format::e4m3, Fp8Format::e5m2)};
      op.reads = {history, Range{b.scale, 0, 1}};
      op.writes = {history, Range{b.scale, 0, 1}, Range{b.scale_inv, 0, 1}};
      return op;
    }
    case 4: return ScenarioBuilder::record(stream, event);
    case 5: return ScenarioBuilder::wait(stream, event, "wait", *rc::gen::element(OpKind::stream_wait_event, OpKind::work_wait));
    case 6: return ScenarioBuilder::host(OpKind::stream_synchronize, stream);
    case 7: return ScenarioBuilder::host(OpKind::event_synchronize, event);
    case 8: return ScenarioBuilder::host(OpKind::device_synchronize);
    case 9: {
      const CommId comm = rank < 2 ? *rc::gen::element(all, pair) : all;
      return ScenarioBuilder::all_reduce(stream, comm, x, *rc::gen::element(x, y), "all_reduce",
                                         *rc::gen::element(ReduceOp::max, ReduceOp::sum));
    }
    case 10: return ScenarioBuilder::host(OpKind::host_signal, 0);
    default: {
      Op op = ScenarioBuilder::host(OpKind::host_wait, 0);
      op.count = *rc::gen::inRange<std::uint32_t>(1, 3);
      return op;
    }
  }
}

/// The ops of one generated step of a thread's program: one op, or a send and a recv in one
/// ncclGroup (numbered `group`).
std::vector<Op> gen_ops(RankId rank, RankId ranks, const Buffers& b, CommId all, CommId pair, StreamId streams, std::uint32_t group) {
  const Range x{b.x, 0, 2}, y{b.y, 0, 2};
  // The last two streams: of a wide rank, its highest lanes.
  const StreamId stream = streams - 2 + *rc::gen::inRange<StreamId>(0, 2);
  const EventId event = *rc::gen::inRange<EventId>(0, 2);
  const int kind = *rc::gen::weightedElement<int>(
      {{3, 0}, {2, 1}, {1, 2}, {1, 3}, {2, 4}, {2, 5}, {1, 6}, {1, 7}, {1, 8}, {3, 9}, {1, 10}, {1, 11}, {2, 12}, {1, 13}});
  if (kind >= 12) {
    // A send / recv with another member of `pair` (ranks 0 and 1) or of `all`: x out, x or y in.
    const bool on_pair = rank < 2 && *rc::gen::arbitrary<bool>();
    const CommId comm = on_pair ? pair : all;
    const RankId peer = on_pair ? 1 - rank : (rank + *rc::gen::inRange<RankId>(1, ranks)) % ranks;
    const Range to = *rc::gen::element(x, y);
    if (kind == 12) {
      if (*rc::gen::arbitrary<bool>()) return {ScenarioBuilder::send(stream, comm, peer, x)};
      return {ScenarioBuilder::recv(stream, comm, peer, to)};
    }
    std::vector<Op> both{ScenarioBuilder::send(stream, comm, peer, x, "send", group), ScenarioBuilder::recv(stream, comm, peer, to, "recv", group)};
    if (*rc::gen::arbitrary<bool>()) std::swap(both[0], both[1]);
    return both;
  }
  return {gen_op(kind, rank, b, all, pair, stream, event)};
}

/// The engine, and the actions applied to it so far (for the failure report).
struct EngineUnderTest {
  const Scenario& scenario;
  EngineOptions options;
  Engine engine;
  std::vector<Action> applied;
  EngineUnderTest(const Scenario& s, const EngineOptions& o) : scenario(s), options(o), engine(s, o) {}
};

using ModelCommand = rc::state::Command<StreamModel, EngineUnderTest>;

std::string action_text(const Action& a) { return fmt::format("{} rank {} lane {}", to_string(a.kind), a.rank, a.lane); }

std::string actions_text(const std::vector<Action>& actions) {
  std::vector<std::string> parts;
  for (const Action& a : actions) parts.push_back(action_text(a));
  return "[" + fmt::format("{}", fmt::join(parts, "; ")) + "]";
}

/// Equal values: the same bits, or both zeros, or both NaN. The sign of a zero out of fmax and
/// the payload of a NaN are unspecified, and the compiler's inlined fmax differs from libm's on
/// them (std::fmax(-0.f, +0.f) is -0 at -O2 and +0 at -O0 here), so the model does not pin them
/// down; a_max_all_reduce_gives_the_same_zero_whatever_the_member_order checks the engine's.
bool same_values(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool same = same_bits({a[i]}, {b[i]}) || (a[i] == 0.0f && b[i] == 0.0f) || (std::isnan(a[i]) && std::isnan(b[i]));
    if (!same) return false;
  }
  return true;
}

/// Fails (with the counterexample files logged) unless engine and model agree on everything.
void require_agreement(const StreamModel& model, EngineUnderTest& sut, const std::string& when) {
  auto fail = [&](const std::string& why) {
    RC_LOG() << action_failure_report("engine_model", sut.scenario, sut.applied, sut.options);
    RC_FAIL(when + ": " + why);
  };
  const std::vector<Action> expected = model.enabled();
  if (sut.engine.enabled() != expected) {
    fail(fmt::format("the engine enables {} but the model enables {}", actions_text(sut.engine.enabled()), actions_text(expected)));
  }
  for (RankId r = 0; r < sut.scenario.ranks.size(); ++r) {
    for (BufferId b = 0; b < sut.scenario.ranks[r].buffers.size(); ++b) {
      const std::vector<float> got = sut.engine.read(r, Range{b, 0, sut.scenario.ranks[r].buffers[b].size});
      if (!same_values(got, model.buffer(r, b))) {
        fail(fmt::format("rank {} buffer {} holds [{}] in the engine but [{}] in the model", r,
                         sut.scenario.ranks[r].buffers[b].name, fmt::join(got, ", "), fmt::join(model.buffer(r, b), ", ")));
      }
    }
  }
  if (sut.engine.done() != model.done()) fail(fmt::format("the engine says done={} but the model says done={}", sut.engine.done(), model.done()));
}

/// Applies `action` to the engine as a run does, then to a copy of `model`, and checks that they
/// agree before and after; returns the model after it.
StreamModel apply_to_both(const StreamModel& model, EngineUnderTest& sut, const Action& action) {
  require_agreement(model, sut, "before " + action_text(action));
  sut.applied.push_back(action);
  if (StepDetail asked = sut.options.step_detail; asked.any()) {
    sut.engine.apply(action);
  } else {
    // Options that ask nothing of a Step: the step a run's loop takes (step_enabled), in its
    // lean form when no mutant is planted.
    const std::vector<Action>& enabled = sut.engine.enabled();
    sut.engine.step_enabled(static_cast<std::size_t>(std::find(enabled.begin(), enabled.end(), action) - enabled.begin()));
  }
  StreamModel after = model;
  after.apply(action);
  require_agreement(after, sut, "after " + action_text(action));
  return after;
}

/// One scheduler action, picked among those the model enables.
struct ApplyAction final : ModelCommand {
  Action action;
  explicit ApplyAction(const StreamModel& model) : action(*rc::gen::elementOf(model.enabled())) {}

  void checkPreconditions(const StreamModel& model) const override {
    const auto enabled = model.enabled();
    RC_PRE(std::find(enabled.begin(), enabled.end(), action) != enabled.end());
  }
  void apply(StreamModel& model) const override { model.apply(action); }
  void run(const StreamModel& model, EngineUnderTest& sut) const override { apply_to_both(model, sut, action); }
  void show(std::ostream& os) const override { os << action_text(action); }
};

/// The rest of the run, each action picked by the next of `choices` among those enabled, until
/// none is (or the choices run out). Single actions seldom reach the end of a program, or its
/// completions: a collective needs every member's issue and join first.
struct RunOn final : ModelCommand {
  std::vector<std::uint32_t> choices;
  explicit RunOn(const StreamModel&) : choices(*rc::gen::container<std::vector<std::uint32_t>>(512, rc::gen::arbitrary<std::uint32_t>())) {}

  /// The actions it takes from `model`.
  std::vector<Action> actions(StreamModel model) const {
    std::vector<Action> taken;
    for (const std::uint32_t choice : choices) {
      const std::vector<Action> enabled = model.enabled();
      if (enabled.empty()) break;
      taken.push_back(enabled[choice % enabled.size()]);
      model.apply(taken.back());
    }
    return taken;
  }
  void apply(StreamModel& model) const override {
    for (const Action& a : actions(model)) model.apply(a);
  }
  void run(const StreamModel& model, EngineUnderTest& sut) const override {
    StreamModel now = model;
    for (const Action& a : actions(model)) now = apply_to_both(now, sut, a);
  }
  void show(std::ostream& os) const override { os << "run on, picking by the choices"; }
};

/// Nothing is enabled: both must agree, and agree on whether the run finished or is stuck.
struct AtTheEnd final : ModelCommand {
  explicit AtTheEnd(const StreamModel&) {}
  void checkPreconditions(const StreamModel& model) const override { RC_PRE(model.enabled().empty()); }
  void run(const StreamModel& model, EngineUnderTest& sut) const override { require_agreement(model, sut, "at the end"); }
  void show(std::ostream& os) const override { os << "at the end"; }
};

/// Communicator ops that match across ranks, per rank in one order (the ops gen_ops writes
/// seldom do): an all-reduce over every rank, a send and its recv, or an exchange, a send and a
/// recv each way grouped on each side (group numbers from 100 on, above gen_ops').
std::vector<std::vector<std::vector<Op>>> matched_comm_ops(RankId ranks, const std::vector<Buffers>& buffers, CommId all,
                                                           CommId pair, StreamId streams) {
  std::vector<std::vector<std::vector<Op>>> chunks(ranks);
  const auto stream = [&] { return streams - 2 + *rc::gen::inRange<StreamId>(0, 2); };
  const auto x = [&](RankId r) { return Range{buffers[r].x, 0, 2}; };
  const auto into = [&](RankId r) { return Range{*rc::gen::element(buffers[r].x, buffers[r].y), 0, 2}; };
  const int count = *rc::gen::inRange(0, 4);
  for (int i = 0; i < count; ++i) {
    const RankId from = *rc::gen::inRange<RankId>(0, ranks);
    const RankId to = (from + *rc::gen::inRange<RankId>(1, ranks)) % ranks;
    const CommId comm = from < 2 && to < 2 && *rc::gen::arbitrary<bool>() ? pair : all;
    switch (*rc::gen::inRange(0, 3)) {
      case 0:
        for (RankId r = 0; r < ranks; ++r) chunks[r].push_back({ScenarioBuilder::all_reduce(stream(), all, x(r), into(r))});
        break;
      case 1:
        chunks[from].push_back({ScenarioBuilder::send(stream(), comm, to, x(from))});
        chunks[to].push_back({ScenarioBuilder::recv(stream(), comm, from, into(to))});
        break;
      default: {
        const auto group = static_cast<std::uint32_t>(100 + i);
        for (const auto& [me, peer] : {std::pair{from, to}, std::pair{to, from}}) {
          const StreamId k = stream();
          std::vector<Op> both{ScenarioBuilder::send(k, comm, peer, x(me), "send", group),
                               ScenarioBuilder::recv(k, comm, peer, into(me), "recv", group)};
          if (*rc::gen::arbitrary<bool>()) std::swap(both[0], both[1]);
          chunks[me].push_back(std::move(both));
        }
      }
    }
  }
  return chunks;
}

}  // namespace

rc::Gen<Scenario> small_program(ProgramShape shape) {
  return rc::gen::exec([shape] {
    const StreamId streams = shape.streams;
    ScenarioBuilder b("model-based engine test");
    const RankId ranks = *rc::gen::inRange<RankId>(shape.min_ranks, shape.max_ranks + 1);
    b.kernels(*rc::gen::element(KernelConcurrency::concurrent, KernelConcurrency::serialized));
    std::vector<Buffers> buffers;
    std::vector<RankId> everyone;
    for (RankId r = 0; r < ranks; ++r) {
      b.rank();
      for (StreamId k = 0; k < streams; ++k) b.stream(r, fmt::format("s{}", k));
      b.event(r, "e0");
      b.event(r, "e1");
      b.flag(r, "f0");
      buffers.push_back(Buffers{b.buffer(r, "x", 2), b.buffer(r, "y", 2), b.buffer(r, "history", 2),
                                b.buffer(r, "scale", 1, {1.0f}), b.buffer(r, "scale_inv", 1, {1.0f})});
      everyone.push_back(r);
    }
    const CommId all = b.comm("all", everyone);
    const CommId pair = b.comm("pair", {0, 1});
    const auto matched = matched_comm_ops(ranks, buffers, all, pair, streams);
    for (RankId r = 0; r < ranks; ++r) {
      const int threads = *rc::gen::inRange(1, 3);
      for (int t = 0; t < threads; ++t) {
        const ThreadId thread = b.thread(r, fmt::format("t{}", t));
        std::vector<std::vector<Op>> steps;
        for (int i = *rc::gen::inRange(0, 9); i > 0; --i) steps.push_back(gen_ops(r, ranks, buffers[r], all, pair, streams, static_cast<std::uint32_t>(i)));
        // Thread 0 also issues the rank's matched ops, in their order, at random places.
        std::size_t at = 0;
        for (const std::vector<Op>& chunk : t == 0 ? matched[r] : std::vector<std::vector<Op>>{}) {
          at = *rc::gen::inRange<std::size_t>(at, steps.size() + 1);
          steps.insert(steps.begin() + static_cast<std::ptrdiff_t>(at++), chunk);
        }
        for (std::vector<Op>& step : steps) {
          for (Op& op : step) b.op(r, thread, std::move(op));
        }
      }
    }
    return b.build();
  });
}
void check_max_all_reduce_zero_is_order_independent(const EngineOptions& engine) {
  // Two ranks all-reduce (max) one element each: a signed zero, or a value; then the same with
  // the inputs swapped between the members. max is commutative, so the results must match.
  const float a = *rc::gen::element(-0.0f, 0.0f, 1.0f), b = *rc::gen::element(-0.0f, 0.0f, -1.0f);
  Scenario last;
  auto reduce = [&](float first, float second) {
    ScenarioBuilder builder("max all-reduce of signed zeros");
    std::vector<RankId> members;
    for (float v : {first, second}) {
      const RankId r = builder.rank();
      builder.stream(r, "s");
      builder.buffer(r, "x", 1, {v});
      members.push_back(r);
    }
    const CommId comm = builder.comm("all", members);
    for (RankId r : members) {
      const ThreadId t = builder.thread(r, "main");
      builder.op(r, t, ScenarioBuilder::all_reduce(0, comm, Range{0, 0, 1}, Range{0, 0, 1}));
    }
    last = builder.build();
    Engine e(last, engine);
    run_first_enabled(e);
    return e.read(0, Range{0, 0, 1});
  };
  const std::vector<float> forward = reduce(a, b), backward = reduce(b, a);
  if (!same_bits(forward, backward)) {
    RC_LOG() << action_failure_report("signed_zero", last, {}, engine);
    RC_FAIL(fmt::format("max all-reduce of ({}, {}) gives {} but ({}, {}) gives {}", a, b, forward[0], b, a, backward[0]));
  }
}

void check_engine_against_model(const EngineOptions& engine, ProgramShape shape) {
  const auto scenario = std::make_shared<const Scenario>(*small_program(shape));
  EngineUnderTest sut(*scenario, engine);
  rc::state::check(StreamModel(scenario), sut, rc::state::gen::execOneOfWithArgs<ApplyAction, RunOn, AtTheEnd>());
}

}  // namespace amaxcheck::props
