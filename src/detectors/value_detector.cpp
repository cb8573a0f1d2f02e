#include "detectors/value_detector.h"

#include <fmt/format.h>

#include <cstring>

#include "engine/engine.h"

namespace amaxcheck {
namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Index of the first element whose bits differ, or -1.
long first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (!same_bits(a[i], b[i])) return static_cast<long>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<long>(std::min(a.size(), b.size()));
}

Participant replica_participant(const Scenario& s, const ReplicaCheck::Replica& r, std::size_t step) {
  return Participant{r.rank, "buffer " + s.ranks[r.rank].buffers[r.range.buffer].name, OpRef{r.rank, 0, 0}, "(final value)", "", step};
}

}  // namespace

void ValueDetector::on_finish(const Engine& engine) {
  if (!engine.done()) return;  // a hung run has no final values; the deadlock detector reports it
  for (const ReplicaCheck& check : scenario_.checks) {
    if (check.replicas.empty()) continue;
    const auto& first = check.replicas.front();
    const std::vector<float> reference = engine.read(first.rank, first.range);
    for (std::size_t i = 1; i < check.replicas.size(); ++i) {
      const auto& replica = check.replicas[i];
      const std::vector<float> values = engine.read(replica.rank, replica.range);
      const long at = first_difference(reference, values);
      if (at < 0) continue;
      Hazard h;
      h.kind = HazardKind::replica_divergence;
      h.summary = fmt::format("{} differs between rank {} and rank {} at element {}: {} vs {}", check.tensor, first.rank,
                              replica.rank, at, reference[static_cast<std::size_t>(at)], values[static_cast<std::size_t>(at)]);
      h.participants = {replica_participant(scenario_, first, engine.steps()), replica_participant(scenario_, replica, engine.steps())};
      hazards_.push_back(std::move(h));
      break;
    }
    if (check.expected.empty()) continue;
    for (const auto& replica : check.replicas) {
      const std::vector<float> values = engine.read(replica.rank, replica.range);
      const long at = first_difference(check.expected, values);
      if (at < 0) continue;
      Hazard h;
      h.kind = HazardKind::value_mismatch;
      h.summary = fmt::format("{} on rank {} element {} is {} but the sequential reference gives {}", check.tensor,
                              replica.rank, at, values[static_cast<std::size_t>(at)], check.expected[static_cast<std::size_t>(at)]);
      h.participants = {replica_participant(scenario_, replica, engine.steps())};
      hazards_.push_back(std::move(h));
      break;  // one report per tensor is enough to act on
    }
  }
}

}  // namespace amaxcheck
