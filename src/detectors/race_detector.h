#pragma once
/// Data races: two accesses to overlapping element ranges of one rank's buffer, at least one a
/// write, with no happens-before between them (vector clocks over threads and streams, joined
/// across ranks by collective completion). Predictive: it reports a race even when this run
/// happened to order the accesses safely.

#include <set>
#include <vector>

#include "detectors/detector.h"

namespace amaxcheck {

/// Which accesses enter the race detector's histories.
enum class RaceAccesses : std::uint8_t {
  may_race,  ///< only those some other access of the scenario may race with (the default)
  all,       ///< every one: the reference the property suite compares the default with
};

class RaceDetector final : public Detector {
 public:
  explicit RaceDetector(const Scenario& scenario, RaceAccesses accesses = RaceAccesses::may_race);
  const char* name() const override { return "race"; }
  Events events() const override { return {.issue = false, .access = true, .complete = false, .access_ops = &racing_ops_}; }
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
  /// One range an op accesses, as on_access checks it: its history row, and whether it is a
  /// write. An op that reads and writes the same range (an in-place all-reduce) makes one write
  /// access of it, so such a read has no entry.
  struct OpAccess {
    Range range;
    std::uint32_t row = 0;  ///< index into history_; kNoRow for a buffer the rank does not have
    std::uint32_t write = 0;
  };
  static constexpr std::uint32_t kNoRow = ~std::uint32_t{0};
  void check_and_record(const AccessEvent& event, History& history, const Range& range, bool write, std::uint32_t site);
  void report(const Access& earlier, const AccessEvent& later, const Range& range, bool write,
              const char* why = "with no happens-before");

  /// Races within one ncclGroup. NCCL runs the ops of a group concurrently, so two of its ops on
  /// one rank that access overlapping ranges, one of them a write (an in-place ring shift: send
  /// x, recv into x), always race, though they share a stream and its clock orders them.
  /// A conflict of op `partner` with the op it is listed under: the op's range and the
  /// partner's, each a write or not.
  struct GroupConflict {
    std::uint32_t partner = 0;
    Range mine, theirs;
    bool mine_write = false, theirs_write = false;
  };
  /// Finds them once per scenario, adding their ops to racing_ops_.
  void find_group_conflicts();
  /// Reports the conflicts of op `n` with partners that accessed earlier in this run, and
  /// records its own access (`site`) for the partners to come.
  void race_within_group(const AccessEvent& event, std::uint32_t n, std::uint32_t site);
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  /// Per op: its slot in group_conflicts_ / group_sites_, or kNone (empty when no group conflicts).
  std::vector<std::uint32_t> group_slot_;
  std::vector<std::vector<GroupConflict>> group_conflicts_;  ///< per slot
  std::vector<std::uint32_t> group_sites_;  ///< per slot: this run's sites_ index of its access, or kNone

  const Scenario& scenario_;
  /// Per rank: its first buffer's row in history_; one past the last rank's last row at the end.
  std::vector<std::size_t> first_buffer_;
  std::vector<History> history_;                ///< per (rank, buffer), flattened: a lookup per access
  /// The accesses (indices into `accesses`, `streams` giving each one's stream) that some other
  /// access of the scenario may race with: on the same row, by another stream, overlapping, one
  /// of the two a write. The others are left out of every history, which changes no report: an
  /// access with no such partner is never reported, and the accesses it would have dropped (a
  /// covering write drops those ordered before it, a read its own stream's reads) can then only
  /// meet accesses by its own stream, which it orders after them. On a row of one stream that
  /// is every access; rows longer than a bound keep all of theirs.
  static std::vector<bool> may_race_with_another(const std::vector<OpAccess>& accesses,
                                                 const std::vector<StreamId>& streams, std::size_t rows);

  /// Per op (OpSite::number), built once per scenario: op n's accesses that may race
  /// (may_race_with_another), reads first, are op_accesses_[op_access_begin_[n] ..
  /// op_access_begin_[n + 1]); an op with none is not recorded at all.
  std::vector<std::uint32_t> op_access_begin_;
  std::vector<OpAccess> op_accesses_;
  OpSet racing_ops_;  ///< per op: it has such an access (Events::access_ops)
  std::vector<OpSite> sites_;                   ///< this run's accessing ops, one per access event
  std::set<std::pair<std::pair<RankId, std::uint64_t>, std::pair<RankId, std::uint64_t>>> reported_;
  std::vector<Hazard> hazards_;
};

}  // namespace amaxcheck
