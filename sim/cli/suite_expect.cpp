#include "cli/suite_expect.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/hazard_report.h"
#include "cli/verdict_report.h"

namespace amaxcheck::cli {
namespace {

/// The found hazards an expectation is about: those of its kinds.
std::vector<const Hazard*> of_kinds(const Expectation& expect, const sched::ExploreResult& result) {
  std::vector<const Hazard*> out;
  for (const auto& found : result.hazards) {
    if (expect.kinds.count(found.hazard.kind)) out.push_back(&found.hazard);
  }
  return out;
}

/// Why a hazard result does not meet a hazard expectation; empty when it does.
std::string hazard_mismatch(const Expectation& expect, const sched::ExploreResult& result) {
  std::string missing;
  for (HazardKind kind : expect.kinds) {
    const bool seen = std::any_of(result.hazards.begin(), result.hazards.end(),
                                  [&](const sched::FoundHazard& f) { return f.hazard.kind == kind; });
    if (!seen) missing += (missing.empty() ? "" : ", ") + std::string(to_string(kind));
  }
  if (!missing.empty()) return fmt::format("no {} found", missing);
  const std::vector<const Hazard*> relevant = of_kinds(expect, result);
  if (!expect.subject.empty() &&
      std::none_of(relevant.begin(), relevant.end(), [&](const Hazard* h) { return h->subject == expect.subject; })) {
    std::string subjects;
    for (const Hazard* h : relevant) {
      if (subjects.find(h->subject) == std::string::npos) subjects += (subjects.empty() ? "" : "; ") + h->subject;
    }
    return fmt::format("no expected hazard is about {} (they are about: {})", expect.subject, subjects);
  }
  for (const std::string& op : expect.ops) {
    const bool takes_part = std::any_of(relevant.begin(), relevant.end(), [&](const Hazard* h) {
      return std::any_of(h->participants.begin(), h->participants.end(),
                         [&](const Participant& p) { return p.op_name == op; });
    });
    if (!takes_part) return fmt::format("op {} takes part in no expected hazard", op);
  }
  return {};
}

std::string got_text(const sched::ExploreResult& result) {
  if (result.verdict != sched::VerdictKind::hazard) return verdict_headline(result);
  std::vector<Hazard> hazards;
  for (const auto& found : result.hazards) hazards.push_back(found.hazard);
  return "HAZARD " + hazard_kinds(hazards);
}

}  // namespace

const char* status_label(CaseStatus status) {
  switch (status) {
    case CaseStatus::met: return "ok";
    case CaseStatus::unmet: return "FAIL";
    case CaseStatus::inconclusive: return "INCONCLUSIVE";
  }
  return "?";
}

const char* status_word(CaseStatus status) {
  switch (status) {
    case CaseStatus::met: return "met";
    case CaseStatus::unmet: return "unmet";
    case CaseStatus::inconclusive: return "inconclusive";
  }
  return "?";
}

Judgement judge(const Expectation& expect, const sched::ExploreResult& result, const sched::ExploreOptions& options) {
  Judgement j;
  j.got = got_text(result);
  const auto unmet = [&](std::string reason) {
    j.status = CaseStatus::unmet;
    j.reason = std::move(reason);
    return j;
  };
  switch (result.verdict) {
    case sched::VerdictKind::inconclusive: {
      j.status = CaseStatus::inconclusive;
      const auto notes = verdict_notes(result, options);
      j.reason = notes.empty() ? "cut short" : notes.front();
      return j;
    }
    case sched::VerdictKind::hazard:
      if (expect.verdict != Expectation::Verdict::hazard) {
        return unmet(fmt::format("expected {}, but: {}", describe(expect), result.hazards.front().hazard.summary));
      }
      if (std::string why = hazard_mismatch(expect, result); !why.empty()) return unmet(why);
      return j;
    case sched::VerdictKind::proven_clean:
      if (expect.verdict == Expectation::Verdict::hazard) {
        return unmet(fmt::format("expected {}, but the complete search found none", describe(expect)));
      }
      return j;
    case sched::VerdictKind::no_hazard_found:
      if (expect.verdict == Expectation::Verdict::hazard) {
        return unmet(fmt::format("expected {}, but {} run(s) found none", describe(expect), result.runs));
      }
      if (expect.verdict == Expectation::Verdict::proven_clean) {
        return unmet("expected a proof, but the check only sampled");
      }
      return j;
  }
  return j;
}

}  // namespace amaxcheck::cli
