// The proof table: the exhaustive search on the seed question's rows, each in its own child
// process (so its peak memory is its own), with a cap on schedules and on time per row.
//   ./build/bench/proof_table                      every row of the table
//   ./build/bench/proof_table N M I [N M I ...]    the given rows (dp, modules, iters)
//   options: --seconds S (per row, default 120)  --max-schedules K (default 50000000)
//            --demo (add the demo's design: 8 x 4 x 2, two microbatches, same order)
// Each row is `amaxcheck check te-async --comm separate --wait before-copy --amax-order
// rank-dependent --microbatches 1 --buckets 1 --fwd-tensors 1 --strategy exhaustive --dp N
// --modules M --iters I`. Prints a Markdown table: schedules explored, sleep-blocked runs,
// steps per schedule, time, peak RSS, and whether the search completed (a proof) or was cut.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "protocols/protocol.h"
#include "scheduler/exhaustive_strategy.h"
#include "scheduler/run.h"

namespace amaxcheck::sched {
namespace {

struct Row {
  std::uint32_t dp = 1, modules = 1, iters = 1;
  bool demo = false;  ///< the demo's design instead of the seed question's small shape
};

ProtocolKnobs knobs_of(const Row& row) {
  ProtocolKnobs k;
  k.protocol = ProtocolName::te_async;
  k.comm = CommChoice::separate;
  k.wait = WaitPoint::before_copy;
  k.dp = row.dp;
  k.modules = row.modules;
  k.iters = row.iters;
  if (row.demo) return k;  // the demo's clean row: same order, two microbatches, defaults otherwise
  k.amax_order = AmaxOrder::rank_dependent;
  k.microbatches = 1;
  k.buckets = 1;
  k.fwd_tensors = 1;
  return k;
}

/// Runs one row in this process and prints its table line (the parent adds the memory).
std::string run_row(const Row& row, double seconds, std::uint64_t max_schedules) {
  const Scenario scenario = build_protocol(knobs_of(row));
  ExhaustiveOptions options;
  options.max_schedules = max_schedules;
  ExhaustiveSearch search(options);
  RunOptions run_options;
  run_options.record_steps = false;
  std::uint64_t hazards = 0, steps = 0;
  bool timed_out = false;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  for (std::uint64_t i = 0; search.begin_run(i); ++i) {
    const RunResult run = run_once(scenario, search, run_options);
    search.end_run(run);
    if (run.outcome != RunOutcome::stopped) {
      steps = run.step_count;
      if (run.has_hazard()) ++hazards;
    }
    if (elapsed() > seconds) {
      timed_out = true;
      break;
    }
  }
  const ExhaustiveStats& st = search.stats();
  const std::string verdict = st.complete ? (hazards ? "complete, hazard" : "**proven clean**")
                              : timed_out ? fmt::format("cut: {} s budget", seconds)
                                          : "cut: schedule cap";
  const std::string name = row.demo ? fmt::format("demo {}x{}x{} (2 microbatches)", row.dp, row.modules, row.iters)
                                    : fmt::format("{} x {} x {}", row.dp, row.modules, row.iters);
  return fmt::format("| {} | {} | {} | {} | {:.2f} s | {}", name, st.explored, st.sleep_blocked, steps, elapsed(), verdict);
}

int main_impl(int argc, char** argv) {
  double seconds = 120;
  std::uint64_t max_schedules = 50'000'000;
  std::vector<Row> rows;
  std::vector<std::uint32_t> numbers;
  bool demo = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (arg == "--max-schedules" && i + 1 < argc) max_schedules = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--demo") demo = true;
    else numbers.push_back(static_cast<std::uint32_t>(std::strtoul(arg.c_str(), nullptr, 10)));
  }
  for (std::size_t i = 0; i + 2 < numbers.size(); i += 3) rows.push_back(Row{numbers[i], numbers[i + 1], numbers[i + 2]});
  if (rows.empty()) {
    for (auto [n, m, it] : {std::array<std::uint32_t, 3>{1, 1, 1}, {2, 1, 1}, {2, 4, 2}, {3, 2, 2}, {3, 4, 2}, {4, 1, 1},
                            {4, 2, 1}, {4, 1, 2}, {8, 1, 1}, {4, 2, 2}}) {
      rows.push_back(Row{n, m, it});
    }
  }
  if (demo) rows.push_back(Row{8, 4, 2, true});
  std::printf("| N x M x I | schedules | sleep-blocked | steps/schedule | time | verdict | peak RSS |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  for (const Row& row : rows) {
    int fds[2];
    if (pipe(fds) != 0) return 3;
    const pid_t child = fork();
    if (child == 0) {
      close(fds[0]);
      const std::string line = run_row(row, seconds, max_schedules);
      if (write(fds[1], line.data(), line.size()) < 0) _exit(3);
      _exit(0);
    }
    close(fds[1]);
    std::string line;
    char buffer[512];
    for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) line.append(buffer, static_cast<std::size_t>(n));
    close(fds[0]);
    int status = 0;
    rusage usage{};
    wait4(child, &status, 0, &usage);
    if (line.empty()) line = fmt::format("| {} x {} x {} | (crashed, status {}) | | | |", row.dp, row.modules, row.iters, status);
    std::printf("%s | %.0f MB |\n", line.c_str(), static_cast<double>(usage.ru_maxrss) / 1024.0);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace amaxcheck::sched

int main(int argc, char** argv) { return amaxcheck::sched::main_impl(argc, argv); }
