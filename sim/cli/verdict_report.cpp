#include "cli/verdict_report.h"

#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/hazard_report.h"

namespace amaxcheck::cli {

std::string verdict_headline(const sched::ExploreResult& result) {
  switch (result.verdict) {
    case sched::VerdictKind::hazard: {
      std::vector<Hazard> hazards;
      for (const auto& found : result.hazards) hazards.push_back(found.hazard);
      return fmt::format("HAZARD ({} distinct: {})", hazards.size(), hazard_kinds(hazards));
    }
    case sched::VerdictKind::proven_clean: return "proven clean";
    case sched::VerdictKind::no_hazard_found: return "no hazard found";
    case sched::VerdictKind::inconclusive: return "inconclusive";
  }
  return "?";
}

namespace {

std::string proof_coverage(const sched::ExploreResult& result) {
  const sched::ExhaustiveOptions search = result.exhaustive_options.value_or(sched::ExhaustiveOptions{});
  std::string bound = search.preemption_bound
                          ? fmt::format("preemption bound {} (it skipped no branch)", *search.preemption_bound)
                          : std::string("no preemption bound");
  return fmt::format(
      "proven: every schedule of the scenario as given, {}: {} schedules explored, {}, every run ended within the "
      "step cap of {} steps",
      search.reduction ? "up to equivalence (partial-order reduction)" : "every interleaving (no reduction)",
      result.exhaustive ? result.exhaustive->explored : result.runs, bound, result.step_cap);
}

std::string sample_coverage(const sched::ExploreResult& result, const sched::ExploreOptions& options) {
  if (result.coverage == sched::Coverage::timed) {
    return "sampled: the one schedule of the timed run, not a proof; --strategy exhaustive proves";
  }
  return fmt::format("sampled: {} {} run(s), not a proof; --strategy exhaustive proves", result.runs,
                     options.strategy);
}

std::vector<std::string> cut_lines(const sched::ExploreResult& result) {
  const sched::CutShort& cut = result.cut_short;
  std::vector<std::string> out;
  if (cut.step_limited_runs > 0) {
    out.push_back(fmt::format("cut short: {} run(s) reached the step cap of {} steps (raise it with --max-steps)",
                              cut.step_limited_runs, cut.step_cap));
  }
  if (cut.schedule_cap) {
    out.push_back(fmt::format(
        "cut short: the search stopped at the schedule cap of {} (raise it with --max-schedules; 0 = none)",
        cut.schedule_cap_value));
  }
  if (cut.bound_skipped > 0) {
    out.push_back(fmt::format(
        "cut short: the preemption bound of {} skipped {} branch(es) (raise it with --preemption-bound; -1 = none)",
        cut.preemption_bound, cut.bound_skipped));
  }
  if (cut.time_budget) {
    out.push_back(fmt::format("cut short: the time budget of {:g} s ran out after {} run(s) (raise it with --time-budget)",
                              cut.time_budget_s, result.runs));
  }
  return out;
}

}  // namespace

std::vector<std::string> verdict_notes(const sched::ExploreResult& result, const sched::ExploreOptions& options) {
  switch (result.verdict) {
    case sched::VerdictKind::proven_clean: return {proof_coverage(result)};
    case sched::VerdictKind::no_hazard_found: return {sample_coverage(result, options)};
    case sched::VerdictKind::hazard:
    case sched::VerdictKind::inconclusive: break;
  }
  std::vector<std::string> lines = cut_lines(result);
  if (lines.empty() && result.verdict == sched::VerdictKind::inconclusive) {
    lines.emplace_back("cut short: the search did not complete");
  }
  return lines;
}

nlohmann::ordered_json cut_short_json(const sched::ExploreResult& result) {
  const sched::CutShort& cut = result.cut_short;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  if (cut.step_limited_runs > 0) {
    out.push_back({{"cause", "step_cap"}, {"limit", cut.step_cap}, {"runs", cut.step_limited_runs},
                   {"raise_with", "--max-steps"}});
  }
  if (cut.schedule_cap) {
    out.push_back({{"cause", "schedule_cap"}, {"limit", cut.schedule_cap_value}, {"raise_with", "--max-schedules"}});
  }
  if (cut.bound_skipped > 0) {
    out.push_back({{"cause", "preemption_bound"}, {"limit", cut.preemption_bound}, {"skipped", cut.bound_skipped},
                   {"raise_with", "--preemption-bound"}});
  }
  if (cut.time_budget) {
    out.push_back({{"cause", "time_budget"}, {"limit", cut.time_budget_s}, {"raise_with", "--time-budget"}});
  }
  return out;
}

int exit_code(sched::VerdictKind verdict) {
  switch (verdict) {
    case sched::VerdictKind::hazard: return exit_hazard;
    case sched::VerdictKind::inconclusive: return exit_inconclusive;
    case sched::VerdictKind::proven_clean:
    case sched::VerdictKind::no_hazard_found: return exit_clean;
  }
  return exit_internal;
}

sched::ProgressFn stderr_progress(std::string unit) {
  return [unit = std::move(unit)](const sched::ExploreProgress& p) {
    const std::string of = p.target > 0 ? fmt::format(" (of {})", p.target) : std::string();
    const double rate = p.elapsed_s > 0 ? static_cast<double>(p.runs) / p.elapsed_s : 0.0;
    fmt::print(stderr, "progress: {} {}{}, {:.{}f}/s, {:.0f} s elapsed\n", p.runs, unit, of, rate, rate < 10 ? 2 : 0,
               p.elapsed_s);
    std::fflush(stderr);
  };
}

}  // namespace amaxcheck::cli
