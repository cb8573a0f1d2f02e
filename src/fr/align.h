#pragma once
/// Ring-buffer alignment, per process group by collective_seq_id.
///
/// A dump keeps only its newest records, so ranks start at different points; and ranks that
/// issue extra collectives (metrics, logging) run their record_id counters ahead, so a record_id
/// cutoff would drop every record of the ranks that run behind. Within one process group,
/// though, the k-th collective carries collective_seq_id k on every member. So each group is
/// aligned on its own: on every rank that still holds records of the group, they run from some
/// first seq to its last; the group is compared from the largest of those first seqs (before
/// it, some rank has forgotten what it did) up to the largest last one.
///
/// A ring buffer loses only its oldest records, so a rank whose records of the group end at #k
/// has issued nothing of the group since: for every later seq it is known not to have joined.
/// What stays unknown is a rank that holds no record of the group at all while its buffer has
/// wrapped (it may have issued any number before its window): its part is undecidable. A rank
/// whose buffer has not wrapped (record_ids from 0) holds its whole history.
///
/// Point-to-point records (is_p2p) belong to no group here.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fr/job.h"

namespace amaxcheck::fr {

/// One rank's records of one group.
struct RankRecords {
  std::uint32_t dump = 0;  // in Job::dumps()
  std::int64_t rank = 0;
  std::vector<std::pair<std::int64_t, std::uint32_t>> by_seq;  // (seq, record), by seq, then issue order
  std::vector<std::uint32_t> issued;                           // records in issue (record_id) order

  std::int64_t first() const { return by_seq.front().first; }
  std::int64_t last() const { return by_seq.back().first; }
  /// The records of `seq`: [begin, end) into by_seq.
  std::pair<std::size_t, std::size_t> at(std::int64_t seq) const;
};

struct GroupRecords {
  std::uint32_t name = 0, desc = 0;   // job-wide text ids (desc: from the first record seen)
  std::vector<std::string> backends;  // the profiling names' prefixes seen ('gloo', 'nccl'), sorted
  std::vector<RankRecords> ranks;     // the ranks with a dump and records of the group, by rank
  std::int64_t lo = 0;                // the first collective_seq_id compared
  std::int64_t hi = 0;                // the last one any rank recorded

  /// "gloo", "nccl", "gloo/nccl"; "unknown" when no record names its backend.
  std::string backend() const;
  const RankRecords* of_rank(std::int64_t rank) const;
};

struct Alignment {
  std::vector<GroupRecords> groups;                       // by name length (code points), then name
  std::unordered_map<std::uint32_t, std::uint32_t> group_of;  // job-wide name id -> index in groups
  std::vector<bool> wrapped;                              // per dump: its ring buffer has wrapped
};

Alignment align(const Job& job);

}  // namespace amaxcheck::fr
