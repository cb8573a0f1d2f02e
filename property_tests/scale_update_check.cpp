#include "scale_update_check.h"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "failure_report.h"
#include "generators.h"
#include "model/builder.h"

namespace amaxcheck::props {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Scenario scale_scenario(const ScaleCase& c) {
  ScenarioBuilder b("scale update");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId s = b.stream(r, "compute");
  const std::uint32_t n = c.params.tensors;
  const Range history{b.buffer(r, "amax_history", c.params.history_len * n, c.history), 0, c.params.history_len * n};
  const Range scale{b.buffer(r, "scale", n, c.scale), 0, n};
  const Range scale_inv{b.buffer(r, "scale_inv", n, std::vector<float>(n, 1.0f)), 0, n};
  Op op = ScenarioBuilder::copy(s, history, history, "scale_update");
  op.kind = OpKind::scale_update;
  op.scale = c.params;
  op.reads = {history, scale};
  op.writes = {history, scale, scale_inv};
  b.op(r, t, op);
  return b.build();
}

std::string show(const std::vector<float>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

std::string describe(const ScaleCase& c) {
  return fmt::format("tensors {} history_len {} algo {} margin {} format {} history {} scale {}", c.params.tensors,
                     c.params.history_len, c.params.algo == HistoryAlgo::max ? "max" : "most_recent", c.params.margin,
                     c.params.format == Fp8Format::e4m3 ? "e4m3" : "e5m2", show(c.history), show(c.scale));
}

/// Fails with the case, the engine's output and the counterexample files.
[[noreturn]] void fail(const std::string& property, const ScaleCase& c, const UpdateRecord& got, const EngineOptions& engine,
                       const std::string& why) {
  const Scenario s = scale_scenario(c);
  RC_LOG() << describe(c) << "\nengine wrote history " << show(got.history) << " scale " << show(got.scale)
           << " scale_inv " << show(got.scale_inv)
           << action_failure_report(property, s, {Action{ActionKind::issue, 0, 0}, Action{ActionKind::execute, 0, 0}}, engine);
  RC_FAIL(why);
  std::abort();
}

rc::Gen<ScaleUpdateParams> params_gen(std::uint32_t max_history = 4) {
  return rc::gen::exec([max_history] {
    ScaleUpdateParams p;
    p.tensors = *rc::gen::inRange<std::uint32_t>(1, 4);
    p.history_len = *rc::gen::inRange<std::uint32_t>(1, max_history + 1);
    p.algo = *rc::gen::element(HistoryAlgo::max, HistoryAlgo::most_recent);
    p.margin = *rc::gen::weightedOneOf<int>({{5, rc::gen::inRange(-3, 4)}, {1, rc::gen::element(-64, 64, -130, 130)}});
    p.format = *rc::gen::element(Fp8Format::e4m3, Fp8Format::e5m2);
    return p;
  });
}

/// A positive previous scale, including the extremes.
rc::Gen<float> previous_scale() {
  return rc::gen::weightedOneOf<float>({{4, rc::gen::map(rc::gen::inRange(1, 4096), [](int v) { return v / 64.0f; })},
                                        {1, rc::gen::element(FLT_MAX, FLT_MIN, 1.0f, 448.0f)}});
}

/// A bad amax value for the window: zero, negative, infinite or NaN.
rc::Gen<float> bad_amax() { return rc::gen::element(0.0f, -0.0f, -1.5f, -FLT_MAX, kInf, -kInf, kNaN); }

}  // namespace

UpdateRecord engine_scale_update(const ScaleCase& c, const EngineOptions& options) {
  const Scenario s = scale_scenario(c);
  Engine engine(s, options);
  run_first_enabled(engine);
  const std::uint32_t n = c.params.tensors;
  UpdateRecord rec;
  rec.consumed = c.history;
  rec.history = engine.read(0, Range{0, 0, c.params.history_len * n});
  rec.scale = engine.read(0, Range{1, 0, n});
  rec.scale_inv = engine.read(0, Range{2, 0, n});
  return rec;
}

void check_scale_update_matches_reference(const EngineOptions& engine) {
  ScaleCase c;
  c.params = *params_gen();
  const std::uint32_t n = c.params.tensors;
  c.history = *rc::gen::container<std::vector<float>>(c.params.history_len * n, special_float());
  c.scale = *rc::gen::container<std::vector<float>>(n, previous_scale());
  const UpdateRecord got = engine_scale_update(c, engine);
  UpdateRecord want;
  want.history = c.history;
  want.scale = c.scale;
  want.scale_inv.assign(n, 1.0f);
  scale_update(want.history, want.scale, want.scale_inv, n, c.params.history_len, c.params.algo, c.params.margin, c.params.format);
  if (!same_bits(got.history, want.history) || !same_bits(got.scale, want.scale) || !same_bits(got.scale_inv, want.scale_inv)) {
    fail("scale_update", c, got, engine,
         fmt::format("the reference writes history {} scale {} scale_inv {}", show(want.history), show(want.scale), show(want.scale_inv)));
  }
}

void check_bad_amax_keeps_the_scale(const EngineOptions& engine) {
  ScaleCase c;
  c.params = *params_gen();
  const std::uint32_t n = c.params.tensors, rows = c.params.history_len;
  const float bad = *bad_amax();
  c.history.assign(rows * n, 0.0f);
  for (std::uint32_t t = 0; t < n; ++t) c.history[t] = bad;
  // Older rows: anything under `most_recent` or after a NaN (torch.max propagates it); under
  // `max`, values that keep the window's max bad.
  const bool any_older = c.params.algo == HistoryAlgo::most_recent || std::isnan(bad);
  for (std::uint32_t i = n; i < rows * n; ++i) {
    c.history[i] = any_older ? *special_float() : *rc::gen::element(bad, 0.0f, -2.0f);
  }
  if (bad == kInf && c.params.algo == HistoryAlgo::max) {
    for (std::uint32_t i = n; i < rows * n; ++i) c.history[i] = *rc::gen::element(kInf, 3.0f, 0.0f);
  }
  c.scale = *rc::gen::container<std::vector<float>>(n, previous_scale());
  const UpdateRecord got = engine_scale_update(c, engine);
  std::vector<float> inverse;
  for (float s : c.scale) inverse.push_back(1.0f / s);
  if (!same_bits(got.scale, c.scale)) fail("bad_amax", c, got, engine, fmt::format("amax {} changed the scale", bad));
  if (!same_bits(got.scale_inv, inverse)) fail("bad_amax", c, got, engine, "scale_inv is not 1/scale");
}

void check_overflowing_scale_clamps_to_flt_max(const EngineOptions& engine) {
  ScaleCase c;
  c.params = *params_gen(1);
  const std::uint32_t n = c.params.tensors;
  // Either a subnormal amax with a small margin, or an ordinary amax with a large negative one.
  if (*rc::gen::arbitrary<bool>()) {
    c.params.margin = *rc::gen::inRange(-2, 3);
    c.history = *rc::gen::container<std::vector<float>>(
        n, rc::gen::element(std::numeric_limits<float>::denorm_min(), 1e-40f, FLT_MIN / 1024));
  } else {
    c.params.margin = *rc::gen::inRange(-200, -127);  // 2^128 or more: over FLT_MAX even at ratio 1
    c.history = *rc::gen::container<std::vector<float>>(n, rc::gen::element(1.0f, 0.25f, 448.0f));
  }
  c.scale.assign(n, 1.0f);
  const UpdateRecord got = engine_scale_update(c, engine);
  for (std::uint32_t t = 0; t < n; ++t) {
    if (got.scale[t] != FLT_MAX) fail("clamp", c, got, engine, fmt::format("tensor {}: scale {} is not FLT_MAX", t, got.scale[t]));
    if (got.scale_inv[t] != 1.0f / FLT_MAX) fail("clamp", c, got, engine, "scale_inv is not 1/FLT_MAX");
  }
}

void check_format_maxima(const EngineOptions& engine) {
  ScaleCase c;
  c.params = *params_gen(1);
  c.params.margin = *rc::gen::inRange(-8, 9);
  const float fp8_max = c.params.format == Fp8Format::e4m3 ? 448.0f : 57344.0f;  // literal, not the engine's table
  const std::uint32_t n = c.params.tensors;
  // amax = fp8_max gives 2^-margin; amax = 1 gives fp8_max * 2^-margin.
  const bool at_max = *rc::gen::arbitrary<bool>();
  c.history.assign(n, at_max ? fp8_max : 1.0f);
  c.scale.assign(n, 3.0f);
  const float want = std::ldexp(at_max ? 1.0f : fp8_max, -c.params.margin);
  const UpdateRecord got = engine_scale_update(c, engine);
  for (std::uint32_t t = 0; t < n; ++t) {
    if (got.scale[t] != want) fail("fp8_max", c, got, engine, fmt::format("scale {} but expected {}", got.scale[t], want));
  }
}

void check_margin_is_a_power_of_two(const EngineOptions& engine) {
  ScaleCase c;
  c.params = *params_gen(1);
  const std::uint32_t n = c.params.tensors;
  // amax in [2^-10, 1]: neither the ratio nor the margins below overflow or go subnormal.
  c.history = *rc::gen::container<std::vector<float>>(
      n, rc::gen::map(rc::gen::inRange(1, 1 << 20), [](int v) { return std::ldexp(static_cast<float>(v), -10 - 10); }));
  for (float& v : c.history) v = std::max(v, std::ldexp(1.0f, -10));
  c.scale.assign(n, 1.0f);
  c.params.margin = 0;
  const UpdateRecord base = engine_scale_update(c, engine);
  c.params.margin = *rc::gen::inRange(-20, 21);
  const UpdateRecord got = engine_scale_update(c, engine);
  for (std::uint32_t t = 0; t < n; ++t) {
    const float want = std::ldexp(base.scale[t], -c.params.margin);
    if (got.scale[t] != want) {
      fail("margin", c, got, engine, fmt::format("tensor {}: scale {} with margin {} but {} / 2^{} = {}", t, got.scale[t],
                                                 c.params.margin, base.scale[t], c.params.margin, want));
    }
  }
}

void check_nan_in_a_max_window_keeps_the_scale(const EngineOptions& engine) {
  ScaleCase c;
  c.params = *params_gen();
  c.params.algo = HistoryAlgo::max;
  c.params.history_len = std::max<std::uint32_t>(c.params.history_len, 2);
  const std::uint32_t n = c.params.tensors, rows = c.params.history_len;
  c.history = *rc::gen::container<std::vector<float>>(rows * n, rc::gen::map(rc::gen::inRange(1, 64), [](int v) { return v / 4.0f; }));
  const std::uint32_t tensor = *rc::gen::inRange<std::uint32_t>(0, n);
  c.history[*rc::gen::inRange<std::uint32_t>(0, rows) * n + tensor] = kNaN;
  c.scale = *rc::gen::container<std::vector<float>>(n, previous_scale());
  const UpdateRecord got = engine_scale_update(c, engine);
  if (got.scale[tensor] != c.scale[tensor]) {
    fail("nan_window", c, got, engine,
         fmt::format("tensor {}: torch.max over a window holding NaN is NaN, so the scale {} must be kept, but the engine "
                     "wrote {}",
                     tensor, c.scale[tensor], got.scale[tensor]));
  }
}

}  // namespace amaxcheck::props
