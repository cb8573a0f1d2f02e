#pragma once
/// Collective agreement. For every communicator and sequence number:
/// - the members' matched ops agree on kind, element count, dtype, reduction op and root
///   (Flight Recorder's categories: type, size, dtype mismatch), reported at the end of the run
///   for the lowest-ranked member and the lowest-ranked one that disagrees with it;
/// - every member issues it (else: ranks not joining);
/// - a send and the recv it is matched with (the k-th from a to b on one communicator) agree on
///   count and dtype (a size mismatch); a side that is never issued leaves its peer stuck,
///   which the deadlock detector reports;
/// - predictive ordering: two collectives a rank issues on one communicator from host threads
///   with no happens-before between them are an ordering hazard, even when this run issued them
///   in a consistent order.

#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "detectors/detector.h"
#include "model/op_kind.h"

namespace amaxcheck {

class CollectiveDetector final : public Detector {
 public:
  explicit CollectiveDetector(const Scenario& scenario);
  const char* name() const override { return "collective"; }
  /// Only communicator ops' issues: most issues are of kernels and event ops, which the engine
  /// then does not call it for.
  Events events() const override { return {.issue = true, .access = false, .complete = false, .comm_issues_only = true}; }
  const std::vector<Hazard>& hazards() const override { return hazards_; }
  /// Skips any other op all the same, for a caller that passes every issue (a wrapper that
  /// forwards all events).
  void on_issue(const IssueEvent& event) override {
    if (is_comm_op(event.site.op->kind)) on_comm_issue(event);
  }
  void on_finish(const Engine& engine) override;
  void reset() override;

 private:
  struct LastIssue {
    ActorId thread = 0;
    Epoch epoch = 0;
    OpSite site;
  };
  void on_comm_issue(const IssueEvent& event);
  void check_match(const IssueEvent& event);
  void sort_issues();
  void report_mismatches();
  void report_mismatch(CommId comm, std::uint64_t seq, const std::vector<OpSite>& sites);
  void check_order(const IssueEvent& event);
  void record_p2p(const IssueEvent& event);
  void report_p2p_mismatches();

  const Scenario& scenario_;
  /// Per communicator, by seq: the members' ops, in issue order until on_finish sorts them by
  /// rank. Reports read them at the end of the run, so they do not depend on which member issued
  /// first (and a world collective's m issues cost m, not m^2 for insertion in rank order). A
  /// rank's seqs on a communicator are 0, 1, 2, ..., so seqs [0, issue_count_[c]) all have
  /// issuers. Rows beyond the count are spare: reset() keeps them and their memory.
  std::vector<std::vector<std::vector<OpSite>>> issues_;
  std::vector<std::uint64_t> issue_count_;
  /// Per (rank, comm), flattened as rank * comms + comm: a table, not a map, since every issue
  /// looks both up.
  std::vector<std::optional<LastIssue>> last_issue_;
  std::vector<std::uint64_t> issued_;
  /// (comm, sender, receiver, pair index) -> the send's and the recv's sites.
  std::map<std::tuple<CommId, RankId, RankId, std::uint64_t>, std::pair<std::optional<OpSite>, std::optional<OpSite>>> p2p_;
  std::vector<Hazard> hazards_;
};

}  // namespace amaxcheck
