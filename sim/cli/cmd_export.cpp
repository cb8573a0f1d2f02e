// amaxcheck export TRACE --perfetto OUT.json: the run as a timeline for ui.perfetto.dev.
#include <fmt/format.h>

#include "cli/commands.h"
#include "export/perfetto.h"
#include "trace/reproduce.h"
#include "trace/trace.h"
#include "util/atomic_file.h"

namespace amaxcheck::cli {
namespace {

struct ExportArgs {
  std::string trace;
  std::string perfetto;
};

int export_trace(const ExportArgs& args) {
  check_distinct_files(args.perfetto, "--perfetto", args.trace, "trace");
  const sched::Trace trace = sched::read_trace_file(args.trace);
  // Its embedded scenario, checked against the trace's hash as `replay` does: a timeline of a
  // trace that does not hold together would show a run that never was.
  // A trace may carry no scenario ("scenario": null, traces/FORMAT.md): then there is none to check.
  if (trace.header.scenario) (void)sched::trace_scenario(trace, args.trace);
  sched::write_chrome_trace_file(args.perfetto, trace);
  fmt::print("wrote {} ({} steps, {} hazard(s), time in {}): open it in https://ui.perfetto.dev or chrome://tracing\n",
             args.perfetto, trace.steps.size(), trace.hazards.size(),
             !trace.steps.empty() && trace.steps.front().timing ? "microseconds" : "step numbers");
  return exit_clean;
}

}  // namespace

void register_export(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* sub = app.add_subcommand("export", "Export a trace as a timeline (Chrome trace-event JSON for Perfetto)");
  sub->add_option("trace", args->trace, "trace file")->required();
  sub->add_option("--perfetto", args->perfetto, "output file (Chrome trace-event JSON)")->required();
  add_command(app, sub, [args] { return export_trace(*args); });
}

}  // namespace amaxcheck::cli
