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
  struct Access {
    Range range;
    ActorId actor = 0;
    Epoch epoch = 0;
    bool write = false;
    OpSite site;
  };
  void check_and_record(const AccessEvent& event, const Range& range, bool write);
  void report(const Access& earlier, const AccessEvent& later, const Range& range, bool write);

  const Scenario& scenario_;
  std::vector<std::size_t> first_buffer_;       ///< per rank: its first buffer's index in history_
  std::vector<std::vector<Access>> history_;    ///< per (rank, buffer), flattened: a lookup per access
  std::set<std::pair<std::pair<RankId, std::uint64_t>, std::pair<RankId, std::uint64_t>>> reported_;
  std::vector<Hazard> hazards_;
};

}  // namespace amaxcheck
