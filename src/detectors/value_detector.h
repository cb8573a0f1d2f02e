#pragma once
/// Values: at the end of a completed run, every ReplicaCheck of the scenario holds
/// bit-identical values on all its replicas (replica consistency), equal to the sequential
/// reference values when the scenario gives them (amax correctness: reduced amax is the max over
/// the ranks that share the tensor, and history, scale and scale_inv follow from it).
///
/// Every difference is reported, each as its own hazard about the check's tensor: a
/// replica_divergence per value held by some replicas other than the check's first replica's
/// (between the first replica and the first holder of that value; the details list who holds
/// which), and a value_mismatch per replica that differs from the expected values. The
/// participants are the ops that last wrote each replica's range (what produced the wrong
/// value), so a hazard's identity names the tensor, the ranks and the ops.

#include <optional>
#include <span>

#include "detectors/detector.h"

namespace amaxcheck {

class ValueDetector final : public Detector {
 public:
  explicit ValueDetector(const Scenario& scenario);
  const char* name() const override { return "values"; }
  /// Accesses only when some op writes a checked range (a scenario without checks needs none).
  Events events() const override {
    return {.issue = false, .access = !watch_list_.empty(), .complete = !watch_list_.empty(), .access_ops = &writing_ops_};
  }
  const std::vector<Hazard>& hazards() const override { return hazards_; }
  /// Remembers the last op that wrote each checked range: a kernel's at its access, a
  /// collective's or a recv's when it completes (its access is at its join, and a kernel may
  /// write the range between the two; a grouped recv's access comes in its completion's step,
  /// just before the completion).
  void on_access(const AccessEvent& event) override;
  void on_complete(const CompleteEvent& event) override;
  void on_finish(const Engine& engine) override;
  void reset() override;

 private:
  /// One replica of one check, in check order.
  struct Watched {
    RankId rank = 0;
    Range range;
    std::optional<OpSite> last_writer;
  };
  Participant participant(const Watched& replica, std::size_t end_step) const;
  std::vector<std::string> describe(const ReplicaCheck& check, const std::vector<const Watched*>& replicas) const;

  const Scenario& scenario_;
  std::vector<Watched> watched_;              // every check's replicas, in order
  // Indices into watched_ by op (OpSite::number), flattened and built once per scenario
  // (on_access runs on every access): the replicas op n writes some of are
  // watch_list_[watch_begin_[n] .. watch_begin_[n + 1]).
  std::vector<std::uint32_t> watch_begin_, watch_list_;
  OpSet writing_ops_;  ///< per op: it writes some replica (Events::access_ops)
  std::vector<OpSite> joined_writers_;  ///< comm ops that write some replica, joined, not completed
  std::vector<Hazard> hazards_;
  std::vector<std::span<const float>> final_values_;  ///< on_finish's scratch: one check's replicas
};

}  // namespace amaxcheck
