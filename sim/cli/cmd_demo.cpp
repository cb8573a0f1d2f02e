// amaxcheck demo: the four seed design points at 8 ranks, each checked against what the
// design notes predict (shared/DESIGN.md section 2). The demo is a suite,
// traces/suites/demo.json, built into the program and run as `amaxcheck suite` runs one.
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/demo_suite.h"
#include "cli/suite_command.h"

namespace amaxcheck::cli {

void register_demo(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "demo", "check the four seed design points at 8 ranks against their expected verdicts (the suite "
              "traces/suites/demo.json, built in) and print a table");
  auto options = std::make_shared<SuiteCommandOptions>();
  options->out_dir = "out/demo";
  sub->add_option("--out", options->out_dir, "folder for the counterexamples' traces and timelines")->capture_default_str();
  sub->add_option("--jobs", options->jobs, "design points checked at once (results do not depend on it)")
      ->capture_default_str();
  sub->add_option("--junit-xml", options->junit_xml, "write a JUnit XML report (one testcase per design point)");
  sub->add_flag("--json", options->json, "machine-readable output");
  sub->footer(suite_exit_codes_help);
  add_command(app, sub, [options] {
    const Suite suite = suite_from_json(nlohmann::json::parse(demo_suite_json), demo_suite_path, ".");
    return run_suite_command(suite, *options);
  });
}

}  // namespace amaxcheck::cli
