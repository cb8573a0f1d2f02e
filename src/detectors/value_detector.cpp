#include "detectors/value_detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "detectors/participant.h"
#include "engine/engine.h"
#include "util/check.h"
#include "util/float_bits.h"

namespace amaxcheck {
namespace {

/// Index of the first element whose bits differ, or -1.
long first_difference(std::span<const float> a, std::span<const float> b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (!same_bits(a[i], b[i])) return static_cast<long>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<long>(std::min(a.size(), b.size()));
}

}  // namespace

ValueDetector::ValueDetector(const Scenario& scenario) : scenario_(scenario) {
  for (const ReplicaCheck& check : scenario.checks) {
    for (const auto& replica : check.replicas) watched_.push_back(Watched{replica.rank, replica.range, std::nullopt});
  }
  // Built for every run_once (a shrink makes many), so in time linear in the ops' writes and
  // the replicas: the replicas by (rank, buffer) first, flattened like watch_list_.
  std::vector<std::uint32_t> first_buffer;  // by rank: the index of its buffer 0
  std::uint32_t buffers = 0;
  for (const Rank& rank : scenario.ranks) {
    first_buffer.push_back(buffers);
    buffers += static_cast<std::uint32_t>(rank.buffers.size());
  }
  std::vector<std::uint32_t> by_buffer_begin(buffers + 1, 0), by_buffer(watched_.size());
  for (const Watched& w : watched_) ++by_buffer_begin[first_buffer[w.rank] + w.range.buffer + 1];
  for (std::uint32_t b = 0; b < buffers; ++b) by_buffer_begin[b + 1] += by_buffer_begin[b];
  std::vector<std::uint32_t> filled(by_buffer_begin.begin(), by_buffer_begin.end() - 1);
  for (std::uint32_t k = 0; k < watched_.size(); ++k) by_buffer[filled[first_buffer[watched_[k].rank] + watched_[k].range.buffer]++] = k;
  writing_ops_ = OpSet(op_count(scenario));
  for_each_op(scenario, [&](std::uint32_t number, const OpRef& ref, const Op& op) {
    const auto begin = static_cast<std::uint32_t>(watch_list_.size());
    watch_begin_.push_back(begin);
    for (const Range& w : op.writes) {
      if (w.buffer >= scenario.ranks[ref.rank].buffers.size()) continue;  // the race detector reports it
      const std::uint32_t b = first_buffer[ref.rank] + w.buffer;
      for (std::uint32_t i = by_buffer_begin[b]; i < by_buffer_begin[b + 1]; ++i) {
        const std::uint32_t k = by_buffer[i];
        const bool listed = std::find(watch_list_.begin() + begin, watch_list_.end(), k) != watch_list_.end();
        if (watched_[k].range.overlaps(w) && !listed) watch_list_.push_back(k);
      }
    }
    if (watch_list_.size() != begin) writing_ops_.insert(number);
  });
  watch_begin_.push_back(static_cast<std::uint32_t>(watch_list_.size()));
}

void ValueDetector::reset() {
  for (Watched& w : watched_) w.last_writer.reset();
  joined_writers_.clear();
  hazards_.clear();
}

void ValueDetector::on_access(const AccessEvent& event) {
  const std::uint32_t n = event.site.number;
  AMAX_CHECK(n + std::size_t{1} < watch_begin_.size(), "an access by an op the scenario does not have");
  if (is_comm_op(event.site.op->kind)) {
    joined_writers_.push_back(event.site);  // its write lands when it completes
    return;
  }
  for (std::uint32_t k = watch_begin_[n]; k < watch_begin_[n + 1]; ++k) watched_[watch_list_[k]].last_writer = event.site;
}

void ValueDetector::on_complete(const CompleteEvent& event) {
  for (const std::uint32_t n : event.ops) {
    const auto joined = std::find_if(joined_writers_.begin(), joined_writers_.end(), [n](const OpSite& s) { return s.number == n; });
    if (joined == joined_writers_.end()) continue;  // writes no checked range
    OpSite writer = *joined;
    writer.step = event.step;
    for (std::uint32_t k = watch_begin_[n]; k < watch_begin_[n + 1]; ++k) watched_[watch_list_[k]].last_writer = writer;
    joined_writers_.erase(joined);
  }
}

Participant ValueDetector::participant(const Watched& replica, std::size_t end_step) const {
  if (replica.last_writer) return participant_at(*replica.last_writer);
  const std::string& buffer = scenario_.ranks[replica.rank].buffers[replica.range.buffer].name;
  return Participant{replica.rank, "buffer " + buffer, OpRef{replica.rank, 0, 0}, "(initial value)", "", end_step};
}

/// Detail lines: which buffer each participant wrote, who the ranks are, and every replica.
std::vector<std::string> ValueDetector::describe(const ReplicaCheck& check,
                                                 const std::vector<const Watched*>& replicas) const {
  std::vector<std::string> lines;
  for (const Watched* w : replicas) {
    const Rank& rank = scenario_.ranks[w->rank];
    lines.push_back(fmt::format("{}: buffer {} {}", rank.name.empty() ? fmt::format("rank {}", w->rank) : rank.name,
                                rank.buffers[w->range.buffer].name,
                                w->last_writer ? "last written by " + w->last_writer->op->name : "never written"));
  }
  std::vector<RankId> ranks;
  for (const auto& replica : check.replicas) ranks.push_back(replica.rank);
  lines.push_back(fmt::format("ranks that must hold it bit-identical: {}", fmt::join(ranks, ", ")));
  return lines;
}

void ValueDetector::on_finish(const Engine& engine) {
  if (!engine.done()) return;  // a hung run has no final values; the deadlock detector reports it
  std::size_t next = 0;  // index of the check's first replica in watched_
  for (const ReplicaCheck& check : scenario_.checks) {
    const std::size_t base = next;
    next += check.replicas.size();
    if (check.replicas.empty()) continue;
    // Views of the final values, not copies: the engine is not stepped again before the run's
    // hazards are gathered, and the list is the detector's own, reused check after check.
    std::vector<std::span<const float>>& values = final_values_;
    values.clear();
    for (std::size_t i = 0; i < check.replicas.size(); ++i) values.push_back(engine.view(watched_[base + i].rank, watched_[base + i].range));
    // Replicas by the value they hold, in replica order: one divergence per value other than
    // the first replica's, between the first replica and the first holder of that value.
    const bool all_agree = std::all_of(values.begin() + 1, values.end(),
                                       [&](std::span<const float> v) { return first_difference(values[0], v) < 0; });
    std::vector<std::vector<std::size_t>> classes;
    for (std::size_t i = 0; i < values.size() && !all_agree; ++i) {
      auto it = std::find_if(classes.begin(), classes.end(),
                             [&](const auto& c) { return first_difference(values[c.front()], values[i]) < 0; });
      if (it == classes.end()) classes.push_back({i});
      else it->push_back(i);
    }
    const Watched& first = watched_[base];
    for (std::size_t c = 1; c < classes.size(); ++c) {
      const std::size_t i = classes[c].front();
      const Watched& replica = watched_[base + i];
      const auto at = static_cast<std::size_t>(first_difference(values[0], values[i]));
      Hazard h;
      h.kind = HazardKind::replica_divergence;
      h.subject = check.tensor;
      h.summary = fmt::format("{} differs between rank {} and rank {} at element {}: {} vs {}", check.tensor, first.rank,
                              replica.rank, at, values[0][at], values[i][at]);
      h.participants = {participant(first, engine.steps()), participant(replica, engine.steps())};
      h.details = describe(check, {&first, &replica});
      for (std::size_t k : {std::size_t{0}, c}) {
        std::vector<RankId> holders;
        for (std::size_t j : classes[k]) holders.push_back(watched_[base + j].rank);
        h.details.push_back(fmt::format("rank {}'s value is held by rank{} {}", watched_[base + classes[k].front()].rank,
                                        holders.size() == 1 ? "" : "s", fmt::join(holders, ", ")));
      }
      hazards_.push_back(std::move(h));
    }
    if (check.expected.empty()) continue;
    // Replicas that all hold the first one's bits differ from the reference where it does.
    const long first_at = first_difference(check.expected, values[0]);
    if (all_agree && first_at < 0) continue;
    for (std::size_t i = 0; i < check.replicas.size(); ++i) {
      const Watched& replica = watched_[base + i];
      const long at = i == 0 || all_agree ? first_at : first_difference(check.expected, values[i]);
      if (at < 0) continue;
      Hazard h;
      h.kind = HazardKind::value_mismatch;
      h.subject = check.tensor;
      h.summary = fmt::format("{} on rank {} element {} is {} but the sequential reference gives {}", check.tensor,
                              replica.rank, at, values[i][static_cast<std::size_t>(at)], check.expected[static_cast<std::size_t>(at)]);
      h.participants = {participant(replica, engine.steps())};
      h.details = describe(check, {&replica});
      hazards_.push_back(std::move(h));
    }
  }
}

}  // namespace amaxcheck
