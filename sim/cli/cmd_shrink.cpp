// amaxcheck shrink TRACE -o OUT: a smaller trace showing the same hazard (the same bug: its
// kind, subject, ops, access direction, cycle), with a map of the shrunk trace's ranks, ops
// and checks back to the original.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/memory_limit.h"
#include "cli/whole_number.h"
#include "trace/reproduce.h"
#include "shrink/shrink.h"
#include "trace/trace.h"
#include "util/atomic_file.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck::cli {
namespace {

struct ShrinkArgs {
  MemoryLimit memory;  ///< --max-memory
  std::string trace;
  std::string out;
  std::string kind;
  std::uint64_t max_tests = 20000;
};

HazardKind target_kind(const ShrinkArgs& args, const sched::Trace& trace) {
  if (args.kind.empty()) {
    if (trace.hazards.empty()) throw InputError(args.trace + ": the trace shows no hazard to shrink");
    return trace.hazards.front().kind;
  }
  if (auto kind = parse_hazard_kind(args.kind)) return *kind;
  throw InputError(fmt::format("--kind: expected a hazard kind ({}), got '{}'", enum_name_list<HazardKind>(", "), args.kind));
}

int shrink(const ShrinkArgs& args) {
  check_distinct_files(args.out, "--output", args.trace, "trace");  // the failing trace stays
  const sched::Trace trace = sched::read_trace_file(args.trace);
  const Scenario scenario = sched::trace_scenario(trace, args.trace);
  args.memory.check_scenario(scenario, args.trace);
  const HazardKind target = target_kind(args, trace);
  // The trace must be a run of its scenario, step for step, as `replay` holds it: a shrink of
  // choices that no longer make its steps would shrink another run than the one reported.
  (void)sched::replay_trace(scenario, trace, args.trace);
  sched::ShrinkOptions options;
  options.max_tests = args.max_tests;
  options.run.engine = sched::engine_options_from_json(trace.header.engine, args.trace);
  const sched::ShrinkResult result = sched::shrink(scenario, trace.choices(), target, options);

  nlohmann::ordered_json parameters;
  parameters["shrunk_from"] = escape_invalid_utf8(args.trace);
  parameters["target"] = to_string(target);
  parameters["hazard"] = result.identity.show();
  parameters["original_strategy"] = trace.header.strategy;
  parameters["original_parameters"] = trace.header.parameters;
  parameters["tests"] = result.tests;
  // Cut short by --max-tests: the run kept is the bug, but maybe not the smallest run of it.
  parameters["budget_exhausted"] = result.budget_exhausted;
  parameters["mapping"] = sched::lineage_json(result.scenario, result.lineage);
  const sched::Trace shrunk = sched::make_trace(
      result.scenario, result.run, sched::TraceOrigin{"shrink", trace.header.seed, trace.header.run_index, parameters},
      options.run.engine);
  sched::write_trace_file(args.out, shrunk);

  const std::size_t bytes_before = sched::trace_to_jsonl(trace).size();
  const std::size_t bytes_after = sched::trace_to_jsonl(shrunk).size();
  const auto& b = result.before;
  const auto& a = result.after;
  fmt::print("shrunk {} keeping the same {} ({} candidate runs{})\n", args.trace, to_string(target), result.tests,
             result.budget_exhausted ? ", budget exhausted" : "");
  fmt::print("  ranks       {:>8} -> {}\n  ops         {:>8} -> {}\n  steps       {:>8} -> {}\n"
             "  deviations  {:>8} -> {}   (choices other than the first enabled action)\n  bytes       {:>8} -> {}\n",
             b.ranks, a.ranks, b.ops, a.ops, b.steps, a.steps, b.deviations, a.deviations, bytes_before, bytes_after);
  fmt::print("original: {}: {}\nshrunk:   {}: {}\nsame bug: {}\n", to_string(result.original.kind), result.original.summary,
             to_string(result.hazard.kind), result.hazard.summary, result.identity.show());
  fmt::print("mapping to the original:\n");
  for (const std::string& line : sched::describe_lineage(result.scenario, result.lineage, scenario)) fmt::print("  {}\n", line);
  fmt::print("wrote {}\nreproduce: {}\n", args.out, sched::replay_command(args.out));
  return exit_clean;
}

}  // namespace

void register_shrink(CLI::App& app) {
  auto args = std::make_shared<ShrinkArgs>();
  CLI::App* sub = app.add_subcommand("shrink", "Shrink a failing trace to a smaller one with the same hazard, mapped back to the original");
  sub->add_option("trace", args->trace, "failing trace file")->required();
  args->memory.add_option(*sub);
  sub->add_option("-o,--output", args->out, "where to write the shrunk trace")->required();
  sub->add_option("--kind", args->kind, "hazard kind to keep (default: the trace's first hazard)");
  sub->add_option("--max-tests", args->max_tests, "budget of candidate runs")->check(whole_number());
  add_command(app, sub, [args] { return shrink(*args); });
}

}  // namespace amaxcheck::cli
