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
  history_.resize(buffers);
}

void RaceDetector::reset() {
  for (auto& accesses : history_) accesses.clear();
  reported_.clear();
  hazards_.clear();
}

void RaceDetector::on_access(const AccessEvent& event) {
  // An op that reads and writes the same range (an in-place all-reduce) is one write access.
  for (const Range& r : *event.reads) {
    bool also_written = false;
    for (const Range& w : *event.writes) also_written |= contains(w, r);
    if (!also_written) check_and_record(event, r, false);
  }
  for (const Range& w : *event.writes) check_and_record(event, w, true);
}

void RaceDetector::check_and_record(const AccessEvent& event, const Range& range, bool write) {
  AMAX_CHECK(event.rank < first_buffer_.size() && range.buffer < scenario_.ranks[event.rank].buffers.size(),
             "an access to a buffer the scenario does not have");
  auto& accesses = history_[first_buffer_[event.rank] + range.buffer];
  // One pass: report each unordered conflicting prior access (in history order), and drop the
  // accesses ordered before a covering write, which can never race with anything that this
  // write does not race with too, so the history stays short.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < accesses.size(); ++i) {
    const Access& prior = accesses[i];
    const bool ordered = prior.actor == event.actor || event.clock->covers(prior.actor, prior.epoch);
    if (!ordered && (prior.write || write) && prior.range.overlaps(range)) report(prior, event, range, write);
    const bool dropped = ordered && contains(range, prior.range) && (write || (!prior.write && prior.actor == event.actor));
    if (dropped) continue;
    if (kept != i) accesses[kept] = prior;
    ++kept;
  }
  accesses.resize(kept);
  if (accesses.capacity() == 0) accesses.reserve(8);  // skips the first regrowths, each a move of every Access
  accesses.push_back(Access{range, event.actor, event.epoch, write, event.site});
}

void RaceDetector::report(const Access& earlier, const AccessEvent& later, const Range& range, bool write) {
  auto key = std::make_pair(std::make_pair(earlier.site.ref.rank, op_id(earlier.site.ref)),
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
                          kind, later.rank, buffer.name, lo, hi, earlier.site.op->name, earlier.site.lane,
                          later.site.op->name, later.site.lane);
  h.participants = {participant_at(earlier.site), participant_at(later.site)};
  h.participants[0].access = earlier.write ? amaxcheck::Access::write : amaxcheck::Access::read;
  h.participants[1].access = write ? amaxcheck::Access::write : amaxcheck::Access::read;
  hazards_.push_back(std::move(h));
}

}  // namespace amaxcheck
