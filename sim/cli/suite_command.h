#pragma once
/// `amaxcheck suite FILE` as a function, so `demo` (a suite built into the program) runs the
/// same code: the table, the counterexamples, --json, --junit-xml and the exit code.
///
/// Exit codes: 0 every case met its expectation; 1 one did not (the summary names each such
/// case); 4 none failed but some case could not be decided within its budget (inconclusive);
/// 2 bad input (raised while reading the suite, before any case runs).

#include <string>

#include "cli/suite_file.h"

namespace amaxcheck::cli {

struct SuiteCommandOptions {
  unsigned jobs = 1;
  std::string out_dir;    ///< empty: out/suites/<suite name>
  std::string junit_xml;  ///< where to write the JUnit report; empty: none
  bool json = false;      ///< one JSON document instead of the table
};

int run_suite_command(const Suite& suite, const SuiteCommandOptions& options);

}  // namespace amaxcheck::cli
