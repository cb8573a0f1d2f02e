#pragma once
/// JUnit XML reports, the file CI systems (Jenkins, GitLab, GitHub Actions' test reporters)
/// read: one <testsuite> of <testcase>s, in the shape pytest's `--junit-xml` writes (the
/// reference: harness/tests/test_junit_xml.py checks a written file against pytest's own).
///
///   <testsuites name=...><testsuite name tests failures errors skipped time>
///     <testcase classname name time>[<failure message type>text</failure> | <error ...>]
///       <system-out>the replay command</system-out></testcase>
///
/// A failure is an expectation that was not met (a hazard in a design expected clean); an
/// error is a case that could not be decided (inconclusive). Text is escaped, and characters
/// XML 1.0 cannot hold are written as "#xNN", as pytest does.

#include <string>
#include <vector>

namespace amaxcheck::cli {

struct JunitCase {
  enum class Outcome { passed, failure, error };
  std::string classname;  ///< the suite's name, dotted, as pytest's module path
  std::string name;
  double time_s = 0;
  Outcome outcome = Outcome::passed;
  std::string message;  ///< failure / error: one line (the hazard summary)
  std::string type;     ///< failure / error: "hazard", "expectation", "inconclusive"
  std::string text;     ///< failure / error: the full report
  std::string system_out;  ///< the command that replays or reruns the case
};

struct JunitSuite {
  std::string name;
  std::vector<JunitCase> cases;
};

/// The document, UTF-8, deterministic but for the times it is given.
std::string junit_xml(const JunitSuite& suite);

/// Writes junit_xml(suite) to `path` atomically (a temporary file, then a rename), creating
/// its folder; InputError naming the path when it cannot.
void write_junit_file(const std::string& path, const JunitSuite& suite);

}  // namespace amaxcheck::cli
