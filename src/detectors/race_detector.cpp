#include "detectors/race_detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "detectors/participant.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

std::uint64_t op_id(const OpRef& ref) { return (static_cast<std::uint64_t>(ref.thread) << 32) | ref.index; }

bool contains(const Range& outer, const Range& inner) {
  return outer.buffer == inner.buffer && outer.offset <= inner.offset &&
         inner.offset + inner.count <= outer.offset + outer.count;
}

}  // namespace

RaceDetector::RaceDetector(const Scenario& scenario, RaceAccesses accesses) : scenario_(scenario) {
  std::size_t buffers = 0;
  for (const Rank& rank : scenario.ranks) {
    first_buffer_.push_back(buffers);
    buffers += rank.buffers.size();
  }
  first_buffer_.push_back(buffers);
  history_.resize(buffers);
  // Every access of every op first, with its stream (its actor: device ops access memory on
  // the stream they run on); then only those that may race are kept (may_race_with_another).
  std::vector<OpAccess> all;
  std::vector<StreamId> streams;
  std::vector<std::uint32_t> all_begin;
  const auto add = [&](RankId rank, StreamId stream, const Range& range, bool write) {
    const bool known = range.buffer < scenario.ranks[rank].buffers.size();
    const auto row = known ? static_cast<std::uint32_t>(first_buffer_[rank] + range.buffer) : kNoRow;
    all.push_back(OpAccess{range, row, write});
    streams.push_back(stream);
  };
  for_each_op(scenario, [&](std::uint32_t, const OpRef& ref, const Op& op) {
    all_begin.push_back(static_cast<std::uint32_t>(all.size()));
    for (const Range& r : op.reads) {
      bool also_written = false;
      for (const Range& w : op.writes) also_written |= contains(w, r);
      if (!also_written) add(ref.rank, op.stream, r, false);
    }
    for (const Range& w : op.writes) add(ref.rank, op.stream, w, true);
  });
  all_begin.push_back(static_cast<std::uint32_t>(all.size()));
  racing_ops_ = OpSet(all_begin.size() - 1);
  const std::vector<bool> kept = accesses == RaceAccesses::all ? std::vector<bool>(all.size(), true)
                                                                : may_race_with_another(all, streams, buffers);
  for (std::size_t n = 0; n + 1 < all_begin.size(); ++n) {
    op_access_begin_.push_back(static_cast<std::uint32_t>(op_accesses_.size()));
    for (std::uint32_t k = all_begin[n]; k < all_begin[n + 1]; ++k) {
      if (kept[k]) op_accesses_.push_back(all[k]);
    }
    if (op_access_begin_.back() != op_accesses_.size()) racing_ops_.insert(static_cast<std::uint32_t>(n));
  }
  op_access_begin_.push_back(static_cast<std::uint32_t>(op_accesses_.size()));
  find_group_conflicts();
}

void RaceDetector::find_group_conflicts() {
  // The ops of each group (a run of consecutive p2p ops of one thread with one nonzero group),
  // by OpSite::number, and each pair of them compared.
  std::vector<std::pair<std::uint32_t, const Op*>> group;
  const auto compare_group = [&] {
    for (std::size_t i = 0; i < group.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        const Op& a = *group[j].second;
        const Op& b = *group[i].second;
        const bool a_writes = a.kind == OpKind::recv, b_writes = b.kind == OpKind::recv;
        if (!a_writes && !b_writes) continue;
        const Range& ra = a_writes ? a.writes.at(0) : a.reads.at(0);
        const Range& rb = b_writes ? b.writes.at(0) : b.reads.at(0);
        if (!ra.overlaps(rb)) continue;
        if (group_slot_.empty()) group_slot_.assign(racing_ops_.size(), kNone);
        for (const auto& [n, partner, mine, theirs, mine_write, theirs_write] :
             {std::tuple{group[j].first, group[i].first, ra, rb, a_writes, b_writes},
              std::tuple{group[i].first, group[j].first, rb, ra, b_writes, a_writes}}) {
          if (group_slot_[n] == kNone) {
            group_slot_[n] = static_cast<std::uint32_t>(group_conflicts_.size());
            group_conflicts_.emplace_back();
          }
          group_conflicts_[group_slot_[n]].push_back(GroupConflict{partner, mine, theirs, mine_write, theirs_write});
          racing_ops_.insert(n);
        }
      }
    }
    group.clear();
  };
  const Op* previous = nullptr;
  for_each_op(scenario_, [&](std::uint32_t n, const OpRef& ref, const Op& op) {
    const bool grouped = is_p2p(op.kind) && op.group != 0;
    const bool continues = grouped && ref.index > 0 && previous != nullptr && previous->group == op.group && is_p2p(previous->kind);
    if (!continues) compare_group();
    if (grouped) group.emplace_back(n, &op);
    previous = &op;
  });
  compare_group();
  group_sites_.assign(group_conflicts_.size(), kNone);
}

void RaceDetector::race_within_group(const AccessEvent& event, std::uint32_t n, std::uint32_t site) {
  const std::uint32_t slot = group_slot_[n];
  for (const GroupConflict& c : group_conflicts_[slot]) {
    const std::uint32_t partner_site = group_sites_[group_slot_[c.partner]];
    if (partner_site == kNone) continue;  // the partner accesses later: it reports the pair
    Access earlier;
    earlier.range = c.theirs;
    earlier.site = partner_site;
    earlier.write = c.theirs_write ? 1 : 0;
    report(earlier, event, c.mine, c.mine_write, "ops of one ncclGroup, which NCCL runs concurrently");
  }
  group_sites_[slot] = site;
}

std::vector<bool> RaceDetector::may_race_with_another(const std::vector<OpAccess>& accesses,
                                                      const std::vector<StreamId>& streams, std::size_t rows) {
  std::vector<bool> may_race(accesses.size(), false);
  // The accesses of each row, in one flat list (a counting sort by row).
  std::vector<std::uint32_t> row_begin(rows + 2, 0);
  for (const OpAccess& a : accesses) {
    if (a.row == kNoRow) continue;
    ++row_begin[a.row + 2];
  }
  for (std::size_t r = 2; r < row_begin.size(); ++r) row_begin[r] += row_begin[r - 1];
  std::vector<std::uint32_t> by_row(row_begin.back());
  for (std::uint32_t k = 0; k < accesses.size(); ++k) {
    if (accesses[k].row == kNoRow) {
      may_race[k] = true;  // on_access reports the bad buffer
      continue;
    }
    by_row[row_begin[accesses[k].row + 1]++] = k;
  }
  // Pairs are compared up to this many accesses on a row; a longer row keeps all of them.
  constexpr std::size_t pairwise_up_to = 512;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::span<const std::uint32_t> row(by_row.data() + row_begin[r], row_begin[r + 1] - row_begin[r]);
    const bool one_stream =
        std::all_of(row.begin(), row.end(), [&](std::uint32_t k) { return streams[k] == streams[row.front()]; });
    if (one_stream) continue;  // one actor: every pair is ordered
    for (std::uint32_t k : row) {
      may_race[k] = row.size() > pairwise_up_to || std::any_of(row.begin(), row.end(), [&](std::uint32_t other) {
                      const OpAccess& a = accesses[k];
                      const OpAccess& b = accesses[other];
                      return streams[k] != streams[other] && (a.write != 0 || b.write != 0) && a.range.overlaps(b.range);
                    });
    }
  }
  return may_race;
}

void RaceDetector::reset() {
  for (History& history : history_) history.size = 0;
  std::fill(group_sites_.begin(), group_sites_.end(), kNone);
  sites_.clear();
  reported_.clear();
  hazards_.clear();
}

// Inlined into on_access's loops: one call per access instead of one per range, which is most of
// what a range that meets a short history costs (issue 19).
[[gnu::always_inline]] inline void RaceDetector::check_and_record(const AccessEvent& event, History& history,
                                                                  const Range& range, bool write, std::uint32_t site) {
  Access* const accesses = history.slots.data();
  // One pass: report each unordered conflicting prior access (in history order), and drop the
  // accesses ordered before a covering write, which can never race with anything that this
  // write does not race with too, so the history stays short.
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < history.size; ++i) {
    const Access& prior = accesses[i];
    bool dropped = false;
    if (write || prior.write) {
      const bool ordered = prior.actor == event.actor || event.clock->covers(prior.actor, prior.epoch);
      if (!ordered && prior.range.overlaps(range)) report(prior, event, range, write);
      dropped = write && ordered && contains(range, prior.range);
    } else {
      // Two reads never race, so their order does not matter: a read drops only its own
      // actor's earlier reads that it covers (the same actor is always ordered).
      dropped = prior.actor == event.actor && contains(range, prior.range);
    }
    if (dropped) continue;
    if (kept != i) accesses[kept] = prior;
    ++kept;
  }
  if (kept == history.slots.size()) {
    if (history.slots.capacity() == 0) history.slots.reserve(8);  // skips the first regrowths
    history.slots.emplace_back();
  }
  Access& recorded = history.slots[kept];
  recorded.range = range;
  recorded.actor = event.actor;
  recorded.epoch = event.epoch;
  recorded.site = site;
  recorded.write = write;
  history.size = kept + 1;
}

void RaceDetector::on_access(const AccessEvent& event) {
  const std::uint32_t n = event.site.number;
  AMAX_CHECK(n + std::size_t{1} < op_access_begin_.size(), "an access by an op the scenario does not have");
  const bool in_group = !group_slot_.empty() && group_slot_[n] != kNone;
  if (op_access_begin_[n] == op_access_begin_[n + 1] && !in_group) return;  // none of its accesses can race
  const auto site = static_cast<std::uint32_t>(sites_.size());
  sites_.push_back(event.site);
  if (in_group) race_within_group(event, n, site);
  for (std::uint32_t k = op_access_begin_[n]; k < op_access_begin_[n + 1]; ++k) {
    const OpAccess& access = op_accesses_[k];
    AMAX_CHECK(access.row != kNoRow, "an access to a buffer the scenario does not have");
    check_and_record(event, history_[access.row], access.range, access.write != 0, site);
  }
}

void RaceDetector::report(const Access& earlier, const AccessEvent& later, const Range& range, bool write,
                          const char* why) {
  const OpSite& earlier_site = sites_[earlier.site];
  auto key = std::make_pair(std::make_pair(earlier_site.ref.rank, op_id(earlier_site.ref)),
                            std::make_pair(later.site.ref.rank, op_id(later.site.ref)));
  if (!reported_.insert(key).second) return;
  const char* kind = earlier.write && write ? "WAW" : earlier.write ? "RAW" : "WAR";
  const Buffer& buffer = scenario_.ranks[later.rank].buffers[range.buffer];
  const std::uint32_t lo = std::max(range.offset, earlier.range.offset);
  const std::uint32_t hi = std::min(range.offset + range.count, earlier.range.offset + earlier.range.count);
  Hazard h;
  h.kind = HazardKind::data_race;
  h.subject = buffer.name;
  h.summary = fmt::format("{} race on rank {} buffer {}[{}..{}) between {} ({}) and {} ({}), {}", kind, later.rank,
                          buffer.name, lo, hi, earlier_site.op->name, earlier_site.lane, later.site.op->name,
                          later.site.lane, why);
  h.participants = {participant_at(earlier_site), participant_at(later.site)};
  h.participants[0].access = earlier.write ? amaxcheck::Access::write : amaxcheck::Access::read;
  h.participants[1].access = write ? amaxcheck::Access::write : amaxcheck::Access::read;
  hazards_.push_back(std::move(h));
}

}  // namespace amaxcheck
