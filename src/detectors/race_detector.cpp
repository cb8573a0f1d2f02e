#include "detectors/race_detector.h"

#include <fmt/format.h>

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

RaceDetector::RaceDetector(const Scenario& scenario) : scenario_(scenario) {
  std::size_t buffers = 0;
  for (const Rank& rank : scenario.ranks) {
    first_buffer_.push_back(buffers);
    buffers += rank.buffers.size();
  }
  first_buffer_.push_back(buffers);
  history_.resize(buffers);
  const auto add = [&](RankId rank, const Range& range, bool write) {
    const bool known = range.buffer < scenario.ranks[rank].buffers.size();
    const auto row = known ? static_cast<std::uint32_t>(first_buffer_[rank] + range.buffer) : kNoRow;
    op_accesses_.push_back(OpAccess{range, row, write});
  };
  for_each_op(scenario, [&](std::uint32_t, const OpRef& ref, const Op& op) {
    op_access_begin_.push_back(static_cast<std::uint32_t>(op_accesses_.size()));
    for (const Range& r : op.reads) {
      bool also_written = false;
      for (const Range& w : op.writes) also_written |= contains(w, r);
      if (!also_written) add(ref.rank, r, false);
    }
    for (const Range& w : op.writes) add(ref.rank, w, true);
  });
  op_access_begin_.push_back(static_cast<std::uint32_t>(op_accesses_.size()));
}

void RaceDetector::reset() {
  for (History& history : history_) history.size = 0;
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
  const auto site = static_cast<std::uint32_t>(sites_.size());
  sites_.push_back(event.site);
  for (std::uint32_t k = op_access_begin_[n]; k < op_access_begin_[n + 1]; ++k) {
    const OpAccess& access = op_accesses_[k];
    AMAX_CHECK(access.row != kNoRow, "an access to a buffer the scenario does not have");
    check_and_record(event, history_[access.row], access.range, access.write != 0, site);
  }
}

void RaceDetector::report(const Access& earlier, const AccessEvent& later, const Range& range, bool write) {
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
  h.summary = fmt::format("{} race on rank {} buffer {}[{}..{}) between {} ({}) and {} ({}), with no happens-before",
                          kind, later.rank, buffer.name, lo, hi, earlier_site.op->name, earlier_site.lane,
                          later.site.op->name, later.site.lane);
  h.participants = {participant_at(earlier_site), participant_at(later.site)};
  h.participants[0].access = earlier.write ? amaxcheck::Access::write : amaxcheck::Access::read;
  h.participants[1].access = write ? amaxcheck::Access::write : amaxcheck::Access::read;
  hazards_.push_back(std::move(h));
}

}  // namespace amaxcheck
