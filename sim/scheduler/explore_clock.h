#pragma once
/// The clock of one exploration: its time budget and its progress reports.
///
/// The budget becomes a deadline that runs check every few thousand steps (RunOptions) and
/// the exploration checks between runs, so reading the clock stays off the hot path.
/// Progress goes to a callback, at most once a second and only once the exploration has run
/// for a second, so short explorations (and tests) report nothing. Safe to call from several
/// workers at once.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

namespace amaxcheck::sched {

/// One progress report.
struct ExploreProgress {
  std::uint64_t runs = 0;    ///< runs (schedules) done so far
  std::uint64_t target = 0;  ///< runs asked for, 0 when unknown (exhaustive, timed)
  double elapsed_s = 0;
};

using ProgressFn = std::function<void(const ExploreProgress&)>;

class ExploreClock {
 public:
  using Clock = std::chrono::steady_clock;

  /// `budget_s`: the time budget, none when empty. `progress` may be empty.
  ExploreClock(std::optional<double> budget_s, ProgressFn progress, std::uint64_t target = 0);

  /// When runs must stop (nothing without a budget).
  std::optional<Clock::time_point> deadline() const { return deadline_; }
  /// Whether the budget has run out (reads the clock; false without a budget).
  bool out_of_time() const;
  /// Records that `runs_done` runs are done; reports progress when a report is due.
  void ran(std::uint64_t runs_done);
  double elapsed_s() const;

 private:
  Clock::time_point start_;
  std::optional<Clock::time_point> deadline_;
  ProgressFn progress_;
  std::uint64_t target_ = 0;
  std::atomic<std::int64_t> next_report_ns_;  ///< since start_
};

}  // namespace amaxcheck::sched
