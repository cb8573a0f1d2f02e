#include "property_checks.h"

#include <fmt/format.h>

#include <set>

#include "failure_report.h"
#include "trace/reproduce.h"

namespace amaxcheck::props {
namespace {

/// Logs the counterexample and fails with `why`.
[[noreturn]] void fail(const std::string& property, const ObservedRun& run, const ProtocolCase& c, const std::string& why) {
  RC_LOG() << failure_report(property, run, check_command(c));
  RC_FAIL(why);
  std::abort();  // RC_FAIL throws; this only tells the compiler
}

std::string show(const std::vector<float>& values) {
  std::vector<std::string> parts;
  for (float v : values) parts.push_back(fmt::format("{}", v));
  return "[" + fmt::format("{}", fmt::join(parts, ", ")) + "]";
}

std::string where(const UpdateKey& key, const ProtocolKnobs& k, std::size_t index, std::uint32_t autocast) {
  std::string text = fmt::format("rank {} module {} {}", key.rank, key.module, key.dir == 0 ? "forward" : "backward");
  if (k.protocol == ProtocolName::current_scaling) text += fmt::format(" tensor {}", key.tensor);
  return text + fmt::format(" update #{} (iter {}, microbatch {})", index, autocast / k.microbatches,
                            autocast % k.microbatches);
}

std::string parity_of(RankId rank, const ProtocolKnobs& k) { return ((rank / k.tp) % k.dp) % 2 ? "odd" : "even"; }

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::set<HazardKind> kinds_of(const ObservedRun& run) {
  std::set<HazardKind> kinds;
  for (const Hazard& h : run.run.hazards) kinds.insert(h.kind);
  return kinds;
}

/// Compares the observed updates with the reference; the first difference, or "".
std::string first_difference(const ProtocolKnobs& k, const UpdateLog& expected, const UpdateLog& observed) {
  for (const auto& [key, records] : observed) {
    if (!expected.count(key)) return fmt::format("rank {} module {} ran scale updates the reference never does", key.rank, key.module);
  }
  for (const auto& [key, want] : expected) {
    auto it = observed.find(key);
    const std::size_t got_count = it == observed.end() ? 0 : it->second.size();
    if (got_count != want.size()) {
      return fmt::format("rank {} module {} {} tensor {}: {} scale updates ran, the reference expects {}", key.rank,
                         key.module, key.dir == 0 ? "forward" : "backward", key.tensor, got_count, want.size());
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      const UpdateRecord& w = want[i];
      const UpdateRecord& g = it->second[i];
      const std::size_t width = w.scale.size();
      const std::vector<float> want_amax(w.consumed.begin(), w.consumed.begin() + static_cast<long>(width));
      const std::vector<float> got_amax(g.consumed.begin(), g.consumed.begin() + static_cast<long>(std::min(width, g.consumed.size())));
      const std::string at = where(key, k, i, w.autocast);
      if (!same_bits(want_amax, got_amax)) {
        return fmt::format("{}: reduced amax {} but the max of the local amaxes over the group is {}", at, show(got_amax),
                           show(want_amax));
      }
      if (!same_bits(w.consumed, g.consumed)) return fmt::format("{}: read history {}, reference {}", at, show(g.consumed), show(w.consumed));
      if (!same_bits(w.history, g.history)) return fmt::format("{}: wrote history {}, reference {}", at, show(g.history), show(w.history));
      if (!same_bits(w.scale, g.scale)) return fmt::format("{}: wrote scale {}, reference {}", at, show(g.scale), show(w.scale));
      if (!same_bits(w.scale_inv, g.scale_inv)) {
        return fmt::format("{}: wrote scale_inv {}, reference {}", at, show(g.scale_inv), show(w.scale_inv));
      }
    }
  }
  return "";
}

/// Index of rank `r`'s buffer called `name`, or -1.
long buffer_named(const Scenario& s, RankId r, const std::string& name) {
  const auto& buffers = s.ranks[r].buffers;
  for (std::size_t b = 0; b < buffers.size(); ++b) {
    if (buffers[b].name == name) return static_cast<long>(b);
  }
  return -1;
}

void require_finished(const std::string& property, const ObservedRun& run, const ProtocolCase& c) {
  if (run.run.outcome != sched::RunOutcome::finished) {
    fail(property, run, c, fmt::format("the run did not finish ({})", sched::to_string(run.run.outcome)));
  }
}

}  // namespace

void check_amax_correctness(const ProtocolCase& c, const EngineOptions& engine) {
  const ObservedRun run = observe(c, engine);
  require_finished("amax_correctness", run, c);
  const std::string problem = first_difference(c.knobs, expected_updates(c.knobs), run.updates);
  if (!problem.empty()) fail("amax_correctness", run, c, problem);
}

void check_replica_consistency(const ProtocolCase& c, const EngineOptions& engine) {
  const ObservedRun run = observe(c, engine);
  require_finished("replica_consistency", run, c);
  for (const auto& [key, records] : run.updates) {
    for (RankId peer : replica_group(c.knobs, key.rank)) {
      if (peer <= key.rank) continue;
      auto it = run.updates.find(UpdateKey{peer, key.module, key.dir, key.tensor});
      const std::size_t peer_count = it == run.updates.end() ? 0 : it->second.size();
      if (peer_count != records.size()) {
        fail("replica_consistency", run, c,
             fmt::format("module {} {}: rank {} ran {} scale updates, its replica rank {} ran {}", key.module,
                         key.dir == 0 ? "forward" : "backward", key.rank, records.size(), peer, peer_count));
      }
      for (std::size_t i = 0; i < records.size(); ++i) {
        const UpdateRecord& a = records[i];
        const UpdateRecord& b = it->second[i];
        if (!same_bits(a.history, b.history) || !same_bits(a.scale, b.scale) || !same_bits(a.scale_inv, b.scale_inv)) {
          fail("replica_consistency", run, c,
               fmt::format("module {} {} tensor {} after update #{}: rank {} holds history {} scale {} scale_inv {}, "
                           "rank {} holds history {} scale {} scale_inv {}",
                           key.module, key.dir == 0 ? "forward" : "backward", key.tensor, i, key.rank, show(a.history),
                           show(a.scale), show(a.scale_inv), peer, show(b.history), show(b.scale), show(b.scale_inv)));
        }
      }
    }
  }
  // The final buffers too: nothing after the last update may make replicas drift.
  for (RankId r = 0; r < run.scenario.ranks.size(); ++r) {
    for (RankId peer : replica_group(c.knobs, r)) {
      if (peer <= r) continue;
      for (std::uint32_t m = 0; m < c.knobs.modules; ++m) {
        for (const char* dir : {"fwd", "bwd"}) {
          for (const char* what : {"amax_history", "scale", "scale_inv"}) {
            const std::string name = fmt::format("m{}.{}.{}", m, dir, what);
            const long a = buffer_named(run.scenario, r, name), b = buffer_named(run.scenario, peer, name);
            RC_ASSERT(a >= 0);
            RC_ASSERT(b >= 0);
            const auto& va = run.final_buffers[r][static_cast<std::size_t>(a)];
            const auto& vb = run.final_buffers[peer][static_cast<std::size_t>(b)];
            if (!same_bits(va, vb)) {
              fail("replica_consistency", run, c,
                   fmt::format("final {}: rank {} holds {}, rank {} holds {}", name, r, show(va), peer, show(vb)));
            }
          }
        }
      }
    }
  }
}

void check_safe_design_is_clean(const ProtocolCase& c, const EngineOptions& engine) {
  const ObservedRun run = observe(c, engine);
  if (run.run.has_hazard()) fail("safe_design_clean", run, c, "a safe design was reported:\n" + run.describe_hazards());
  require_finished("safe_design_clean", run, c);
}

void check_safe_design_is_clean_exhaustively(const ProtocolKnobs& knobs, std::uint64_t max_schedules,
                                             const EngineOptions& engine) {
  const Scenario scenario = build_protocol(knobs);
  sched::ExploreOptions options;
  options.strategy = "exhaustive";
  options.args.set("max-schedules", max_schedules);
  options.run.engine = engine;
  const sched::ExploreResult result = sched::explore(scenario, options);
  RC_TAG(result.coverage_complete ? "every schedule" : "capped");
  if (result.hazards.empty()) return;
  const std::string command = fmt::format("{} --strategy exhaustive --max-schedules {}", command_line(knobs), max_schedules);
  std::string text = "\ncounterexample:\n  rebuild:  " + command + "\n";
  if (result.first_failure) {
    const std::string trace = failure_folder() + "/safe_design_exhaustive.trace.jsonl";
    sched::write_trace_file(trace, sched::failure_trace(scenario, options, *result.first_failure));
    text += "  replay:   " + sched::replay_command(trace) + "\n";
  }
  for (const auto& found : result.hazards) text += fmt::format("{}: {}\n", to_string(found.hazard.kind), found.hazard.summary);
  RC_LOG() << text;
  RC_FAIL(fmt::format("a safe design was reported in {} of the explored schedules", result.runs));
}

void check_unsafe_design_is_reported(UnsafeDesign design, const ProtocolCase& c, const EngineOptions& engine) {
  const ObservedRun run = observe(c, engine);
  const std::set<HazardKind> kinds = kinds_of(run);
  const ProtocolKnobs& k = c.knobs;
  const std::string property = "unsafe_design_reported";
  auto kinds_within = [&](std::initializer_list<HazardKind> allowed) {
    for (HazardKind kind : kinds) {
      if (std::find(allowed.begin(), allowed.end(), kind) == allowed.end()) {
        fail(property, run, c, fmt::format("{}: unexpected hazard kind {}", to_string(design), to_string(kind)));
      }
    }
  };
  switch (design) {
    case UnsafeDesign::wait_after_copy:
    case UnsafeDesign::evaluation_module_first: {
      kinds_within({HazardKind::data_race, HazardKind::value_mismatch, HazardKind::replica_divergence});
      bool named = false;
      for (const Hazard& h : run.run.hazards) {
        if (h.kind != HazardKind::data_race || h.participants.size() != 2) continue;
        const Participant& a = h.participants[0];
        const Participant& b = h.participants[1];
        const bool pair = (starts_with(a.op_name, "copy_back_") && starts_with(b.op_name, "amax_reduce_")) ||
                          (starts_with(b.op_name, "copy_back_") && starts_with(a.op_name, "amax_reduce_"));
        named |= pair && a.rank == b.rank;
      }
      if (!named) fail(property, run, c, "no data race between a copy-back and the amax all-reduce on one rank was reported");
      break;
    }
    case UnsafeDesign::shared_comm_rank_dependent_order: {
      kinds_within({HazardKind::collective_mismatch, HazardKind::deadlock});
      if (!kinds.count(HazardKind::collective_mismatch)) fail(property, run, c, "no collective mismatch was reported");
      for (const Hazard& h : run.run.hazards) {
        if (h.kind != HazardKind::collective_mismatch) continue;
        RC_ASSERT(h.participants.size() == 2u);
        const Participant& a = h.participants[0];
        const Participant& b = h.participants[1];
        // The rank-dependent order shifts the backward amax reduction past the buckets on one
        // parity: it meets a bucket (a size mismatch), and the buckets after it meet each other
        // one place off (different ops of one signature).
        const bool ops = (a.op_name == "amax_reduce_bwd" && starts_with(b.op_name, "grad_bucket_")) ||
                         (b.op_name == "amax_reduce_bwd" && starts_with(a.op_name, "grad_bucket_")) ||
                         (starts_with(a.op_name, "grad_bucket_") && starts_with(b.op_name, "grad_bucket_") &&
                          a.op_name != b.op_name);
        if (!ops || parity_of(a.rank, k) == parity_of(b.rank, k)) {
          fail(property, run, c, fmt::format("the mismatch names the wrong participants: rank {} ({}) and rank {} ({})", a.rank,
                                             a.op_name, b.rank, b.op_name));
        }
      }
      break;
    }
    case UnsafeDesign::serialized_rank_dependent_order: {
      kinds_within({HazardKind::deadlock});
      if (!kinds.count(HazardKind::deadlock)) fail(property, run, c, "no deadlock was reported");
      for (const Hazard& h : run.run.hazards) {
        std::set<std::string> parities;
        bool amax = false, bucket = false;
        for (const Participant& p : h.participants) {
          parities.insert(parity_of(p.rank, k));
          amax |= p.op_name == "amax_reduce_bwd";
          bucket |= starts_with(p.op_name, "grad_bucket_");
        }
        if (!amax || !bucket || parities.size() != 2) {
          fail(property, run, c, "the deadlock report does not name the amax reduction and a gradient bucket on ranks "
                                 "that launch them in opposite orders");
        }
      }
      break;
    }
    case UnsafeDesign::skip_on_part_of_a_group: {
      kinds_within({HazardKind::collective_mismatch, HazardKind::unjoined_collective, HazardKind::deadlock});
      std::set<RankId> skipped;
      for (const SkipRule& s : k.skips) skipped.insert(s.rank);
      bool named = false;
      for (const Hazard& h : run.run.hazards) {
        if (h.kind != HazardKind::collective_mismatch && h.kind != HazardKind::unjoined_collective) continue;
        for (const Participant& p : h.participants) named |= skipped.count(p.rank) > 0;
      }
      if (!named) fail(property, run, c, "no collective mismatch or unjoined collective names a rank that skipped the module");
      break;
    }
  }
}

}  // namespace amaxcheck::props
