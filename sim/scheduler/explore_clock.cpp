#include "scheduler/explore_clock.h"

namespace amaxcheck::sched {
namespace {
constexpr std::int64_t report_every_ns = 1'000'000'000;
}

ExploreClock::ExploreClock(std::optional<double> budget_s, ProgressFn progress, std::uint64_t target)
    : start_(Clock::now()), progress_(std::move(progress)), target_(target), next_report_ns_(report_every_ns) {
  // A budget longer than the clock can count to (steady_clock's nanoseconds reach about 292
  // years) is no deadline: converted, it would overflow into one already past.
  const std::chrono::duration<double> left = Clock::time_point::max() - start_;
  if (budget_s && *budget_s < left.count() / 2) {
    deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*budget_s));
  }
}

bool ExploreClock::out_of_time() const { return deadline_ && Clock::now() >= *deadline_; }

double ExploreClock::elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

void ExploreClock::ran(std::uint64_t runs_done) {
  if (!progress_) return;
  const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
  std::int64_t due = next_report_ns_.load(std::memory_order_relaxed);
  if (now_ns < due) return;
  // One worker wins the report; the others see the next due time.
  if (!next_report_ns_.compare_exchange_strong(due, now_ns + report_every_ns)) return;
  progress_(ExploreProgress{runs_done, target_, static_cast<double>(now_ns) / 1e9});
}

}  // namespace amaxcheck::sched
