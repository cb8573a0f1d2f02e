#include "cli/suite_runner.h"

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "export/perfetto.h"

namespace amaxcheck::cli {
namespace {

CaseRun run_case(const SuiteCase& c, const SuiteRunOptions& options) {
  CheckRequest request;
  request.explore = c.explore;
  request.explore.jobs = 1;
  request.trace_out = fmt::format("{}/{}.trace.jsonl", options.out_dir, slug(c.name));
  CaseRun run;
  run.outcome = run_check(c.scenario, request);
  run.judgement = judge(c.expect, run.outcome.result, request.explore);
  if (run.outcome.trace) {
    run.timeline = fmt::format("{}/{}.perfetto.json", options.out_dir, slug(c.name));
    sched::write_chrome_trace_file(run.timeline, *run.outcome.trace);
  }
  return run;
}

}  // namespace

std::vector<CaseRun> run_suite(const Suite& suite, const SuiteRunOptions& options,
                               const std::function<void(std::size_t, const CaseRun&)>& on_case) {
  const std::size_t n = suite.cases.size();
  std::vector<std::optional<CaseRun>> done(n);
  std::vector<std::exception_ptr> errors(n);
  std::mutex mutex;
  std::condition_variable finished;
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      std::optional<CaseRun> run;
      std::exception_ptr error;
      try {
        run = run_case(suite.cases[i], options);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(mutex);
      done[i] = std::move(run);
      errors[i] = error;
      if (error) next = n;  // start nothing new; the cases already running finish
      finished.notify_all();
    }
  };
  const unsigned workers = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, options.jobs), n));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < workers; ++t) threads.emplace_back(work);
  std::exception_ptr first_error;
  for (std::size_t i = 0; i < n && !first_error; ++i) {
    std::unique_lock lock(mutex);
    finished.wait(lock, [&] { return done[i].has_value() || errors[i] != nullptr; });
    if (errors[i]) {
      first_error = errors[i];
      break;
    }
    const CaseRun& run = *done[i];
    lock.unlock();
    on_case(i, run);
  }
  for (std::thread& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
  std::vector<CaseRun> runs;
  for (auto& run : done) runs.push_back(std::move(*run));
  return runs;
}

}  // namespace amaxcheck::cli
