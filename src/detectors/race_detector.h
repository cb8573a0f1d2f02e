#pragma once
/// Data races: two accesses to overlapping element ranges of one rank's buffer, at least one a
/// write, with no happens-before between them (vector clocks over threads and streams, joined
/// across ranks by collective completion). Predictive: it reports a race even when this run
/// happened to order the accesses safely.

#include <set>
#include <vector>

#include "detectors/detector.h"

namespace amaxcheck {

class RaceDetector final : public Detector {
 public:
  explicit RaceDetector(const Scenario& scenario);
  const char* name() const override { return "race"; }
  Events events() const override { return {false, true, false}; }
  const std::vector<Hazard>& hazards() const override { return hazards_; }
  void on_access(const AccessEvent& event) override;
  void reset() override;

 private:
  /// An access this run made, kept until a covering write orders it away. Small, since the
  /// history is compacted by copying: the op that made it is sites_[site]. 32 bytes, so that
  /// indexing a row is a shift.
  struct Access {
    Range range;
    ActorId actor = 0;
    Epoch epoch = 0;
    std::uint32_t site = 0;
    std::uint32_t write = 0;  ///< 0 or 1: a bool would leave the size at 28
    std::uint32_t unused = 0;
  };
  static_assert(sizeof(Access) == 32);
  /// The accesses of one (rank, buffer) that can still race. A row only grows, and `size` says
  /// how much of it is in use: compacting and appending never go through the vector's resizing,
  /// and a reset keeps every row's memory.
  struct History {
    std::vector<Access> slots;
    std::uint32_t size = 0;
  };
  void check_and_record(const AccessEvent& event, History& history, const Range& range, bool write, std::uint32_t site);
  void report(const Access& earlier, const AccessEvent& later, const Range& range, bool write);

  const Scenario& scenario_;
  /// Per rank: its first buffer's row in history_; one past the last rank's last row at the end.
  std::vector<std::size_t> first_buffer_;
  std::vector<History> history_;                ///< per (rank, buffer), flattened: a lookup per access
  std::vector<OpSite> sites_;                   ///< this run's accessing ops, one per access event
  std::set<std::pair<std::pair<RankId, std::uint64_t>, std::pair<RankId, std::uint64_t>>> reported_;
  std::vector<Hazard> hazards_;
};

}  // namespace amaxcheck
