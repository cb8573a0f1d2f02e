#pragma once
/// Whether a case's check met its expectation (suite_file.h).
///
/// - expected proven clean: met by a completed exhaustive search without a hazard;
/// - expected no hazard found: met by a sample without a hazard, or by a proof (it says more);
/// - expected a hazard: met when every expected kind was found, the subject (if given) is what
///   one of those hazards is about, and each expected op takes part in one of them;
/// - a check that was cut short without a hazard is inconclusive, whatever was expected: the
///   suite cannot tell (exit 4), unless another case failed outright (exit 1). A hazard found
///   is real even when the check was cut short, so it is judged as any other.

#include <string>

#include "cli/suite_file.h"
#include "scheduler/explore.h"

namespace amaxcheck::cli {

enum class CaseStatus { met, unmet, inconclusive };

/// "ok", "FAIL", "INCONCLUSIVE" (the table's words); "met", "unmet", "inconclusive" (JSON's).
const char* status_label(CaseStatus status);
const char* status_word(CaseStatus status);

struct Judgement {
  CaseStatus status = CaseStatus::met;
  std::string got;     ///< "proven clean", "HAZARD data_race, deadlock", "inconclusive"
  std::string reason;  ///< why it was not met, or what cut it short; empty when met
};

Judgement judge(const Expectation& expect, const sched::ExploreResult& result, const sched::ExploreOptions& options);

}  // namespace amaxcheck::cli
