// `amaxcheck fr-scan DUMP...` (hidden): reads PyTorch Flight Recorder dumps, bounded and in
// parallel, aligns and matches them, and prints the findings and the records they and the replay
// scenario need as compact JSON (fr/match_json.h) for `amaxcheck import-fr`, the Python command
// that reports them and writes the scenario (harness/amaxharness/fr/). Not for people: import-fr is.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "cli/commands.h"
#include "fr/dump.h"
#include "fr/match_json.h"
#include "util/check.h"

namespace amaxcheck::cli {
namespace {

struct FrScanArgs {
  std::vector<std::string> dumps;
  std::string format = "auto";
  unsigned jobs = 0;
  std::string kernels = "auto";
  std::int64_t window = 8;
};

int run_fr_scan(const FrScanArgs& args) {
  const fr::DumpFormat format = args.format == "pickle" ? fr::DumpFormat::pickle
                                : args.format == "json" ? fr::DumpFormat::json
                                                        : fr::DumpFormat::auto_detect;
  // At most 8 by default: each thread's malloc arena reserves address space, which a caller's
  // RLIMIT_AS counts; more threads than files or cores would not help anyway.
  const unsigned jobs = args.jobs ? args.jobs : std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  fr::MatchOptions options;
  options.kernels = args.kernels == "serialized"   ? fr::Kernels::serialized
                    : args.kernels == "concurrent" ? fr::Kernels::concurrent
                                                   : fr::Kernels::auto_detect;
  options.window = args.window;
  const std::string out = fr::match_dumps(args.dumps, format, jobs, options);
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    throw InputError("fr-scan: cannot write the output");
  }
  return exit_clean;
}

}  // namespace

void register_fr_scan(CLI::App& app) {
  auto args = std::make_shared<FrScanArgs>();
  CLI::App* sub = app.add_subcommand("fr-scan", "Read and match Flight Recorder dumps for import-fr (compact JSON on stdout)");
  sub->group("");  // hidden: `amaxcheck import-fr` is the command people run
  sub->add_option("dumps", args->dumps, "dump files (pickle or JSON)")->required();
  sub->add_option("--format", args->format, "auto (JSON when the file starts with '{' or '['), pickle or json")
      ->check(CLI::IsMember({"auto", "pickle", "json"}));
  sub->add_option("--jobs", args->jobs, "threads reading files (default: one per CPU)");
  sub->add_option("--kernels", args->kernels, "auto (from each group's backend), serialized or concurrent")
      ->check(CLI::IsMember({"auto", "serialized", "concurrent"}));
  sub->add_option("--window", args->window, "collectives per group kept for the scenario (default 8)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  add_command(app, sub, [args] { return run_fr_scan(*args); });
}

}  // namespace amaxcheck::cli
