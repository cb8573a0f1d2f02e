#pragma once
/// Running a suite: every case is one check (check_runner.h), judged against its expectation
/// (suite_expect.h). Cases run `jobs` at a time, each single-threaded and deterministic, and
/// are reported in the suite's order whatever finished first, so the output does not depend
/// on `jobs` (but for the times).

#include <functional>
#include <string>
#include <vector>

#include "cli/check_runner.h"
#include "cli/suite_expect.h"
#include "cli/suite_file.h"

namespace amaxcheck::cli {

struct SuiteRunOptions {
  unsigned jobs = 1;
  /// Where each counterexample goes: DIR/<case>.trace.jsonl and its Perfetto timeline
  /// DIR/<case>.perfetto.json.
  std::string out_dir = "out/suite";
};

struct CaseRun {
  CheckOutcome outcome;
  Judgement judgement;
  std::string timeline;  ///< the Perfetto export of the counterexample; empty without one
};

/// Runs every case; `on_case(i, run)` is called for case 0, 1, ... in order, as soon as each
/// and every case before it are done. An error in a case (InternalError) reaches the caller
/// as it would have with one job: the one of the lowest case index, after the running cases
/// finished.
std::vector<CaseRun> run_suite(const Suite& suite, const SuiteRunOptions& options,
                               const std::function<void(std::size_t, const CaseRun&)>& on_case);

}  // namespace amaxcheck::cli
