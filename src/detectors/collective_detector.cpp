#include "detectors/collective_detector.h"

#include <fmt/format.h>

#include <algorithm>

#include "detectors/participant.h"

namespace amaxcheck {
namespace {

std::string signature(const Op& op) {
  const std::uint32_t count = op.reads.empty() ? 0 : op.reads.front().count;
  std::string sig = fmt::format("{} count={} dtype={}", to_string(op.kind), count, enum_name(op.dtype));
  if (has_reduce_op(op.kind)) sig += fmt::format(" op={}", enum_name(op.reduce));
  if (has_root(op.kind)) sig += fmt::format(" root={}", op.root);
  return sig;
}

}  // namespace

CollectiveDetector::CollectiveDetector(const Scenario& scenario)
    : scenario_(scenario),
      issues_(scenario.comms.size()),
      issue_count_(scenario.comms.size(), 0),
      last_issue_(scenario.ranks.size() * scenario.comms.size()),
      issued_(scenario.ranks.size() * scenario.comms.size(), 0) {}

void CollectiveDetector::on_comm_issue(const IssueEvent& event) {
  if (is_p2p(event.site.op->kind)) {
    record_p2p(event);
    check_order(event);  // NCCL orders a comm's p2p ops with its collectives
    return;
  }
  // A discarded (zero-element) collective is matched with nothing and takes no place in order.
  if (is_discarded_collective(*event.site.op)) return;
  ++issued_[event.site.ref.rank * scenario_.comms.size() + event.site.op->comm];
  check_match(event);
  check_order(event);
}

void CollectiveDetector::check_match(const IssueEvent& event) {
  // Sorted by rank in on_finish: the report compares the lowest-ranked member with the
  // lowest-ranked one that disagrees, whichever issued first, so that every schedule that issues
  // the same ops reports the same pair (partial-order reduction runs one schedule of each class).
  const CommId comm = event.site.op->comm;
  auto& by_seq = issues_[comm];
  if (event.seq >= issue_count_[comm]) {
    issue_count_[comm] = event.seq + 1;
    if (by_seq.size() < issue_count_[comm]) by_seq.resize(issue_count_[comm]);
  }
  by_seq[event.seq].push_back(event.site);
}

void CollectiveDetector::sort_issues() {
  // A rank issues each (comm, seq) once, so the rank order is total.
  for (CommId c = 0; c < issues_.size(); ++c) {
    for (std::uint64_t seq = 0; seq < issue_count_[c]; ++seq) {
      auto& sites = issues_[c][seq];
      const auto by_rank = [](const OpSite& a, const OpSite& b) { return a.ref.rank < b.ref.rank; };
      // Members often issue in rank order, and checking that costs less than sorting.
      if (!std::is_sorted(sites.begin(), sites.end(), by_rank)) std::sort(sites.begin(), sites.end(), by_rank);
    }
  }
}

void CollectiveDetector::reset() {
  for (CommId c = 0; c < issues_.size(); ++c) {
    for (std::uint64_t seq = 0; seq < issue_count_[c]; ++seq) issues_[c][seq].clear();
  }
  std::fill(issue_count_.begin(), issue_count_.end(), 0);
  std::fill(last_issue_.begin(), last_issue_.end(), std::nullopt);
  std::fill(issued_.begin(), issued_.end(), 0);
  p2p_.clear();
  hazards_.clear();
}

void CollectiveDetector::report_mismatches() {
  for (CommId c = 0; c < issues_.size(); ++c) {
    for (std::uint64_t seq = 0; seq < issue_count_[c]; ++seq) report_mismatch(c, seq, issues_[c][seq]);
  }
}

void CollectiveDetector::report_mismatch(CommId comm, std::uint64_t seq, const std::vector<OpSite>& sites) {
  const OpSite& first = sites.front();
  const Op& other = *first.op;
  for (std::size_t i = 1; i < sites.size(); ++i) {
    const Op& op = *sites[i].op;
    // The engine's rendezvous uses the same rule: a pair it refuses to complete is reported here.
    const char* why = collective_disagreement(other, op);
    // NCCL matches a communicator's collectives by their order alone: two different ops of one
    // signature (an amax reduction against a gradient bucket of the same size) complete together
    // and exchange each other's data, the silent form of a misordering. Ops are told apart by
    // their names, which every member gives the same logical op.
    if (why == nullptr && !other.name.empty() && !op.name.empty() && other.name != op.name) {
      why = "same signature, different ops (NCCL reduces them together)";
    }
    if (why == nullptr) continue;
    Hazard h;
    h.kind = HazardKind::collective_mismatch;
    h.subject = "comm " + scenario_.comms[comm].name;
    h.summary = fmt::format("{} on comm {} collective #{}: rank {} issued {} ({}) but rank {} issued {} ({})", why,
                            scenario_.comms[comm].name, seq, first.ref.rank, other.name, signature(other),
                            sites[i].ref.rank, op.name, signature(op));
    h.participants = {participant_at(first), participant_at(sites[i])};
    hazards_.push_back(std::move(h));
    return;  // one report per collective
  }
}

void CollectiveDetector::record_p2p(const IssueEvent& event) {
  const Op& op = *event.site.op;
  const RankId me = event.site.ref.rank;
  const RankId peer = scenario_.comms[op.comm].members.at(op.peer);
  const bool send = op.kind == OpKind::send;
  auto& sides = p2p_[{op.comm, send ? me : peer, send ? peer : me, event.seq}];
  (send ? sides.first : sides.second) = event.site;
}

void CollectiveDetector::report_p2p_mismatches() {
  for (const auto& [key, sides] : p2p_) {
    if (!sides.first || !sides.second) continue;
    const Op& send = *sides.first->op;
    const Op& recv = *sides.second->op;
    const char* why = p2p_disagreement(send, recv);
    if (why == nullptr) continue;
    const auto& [comm, sender, receiver, index] = key;
    Hazard h;
    h.kind = HazardKind::collective_mismatch;
    h.subject = "comm " + scenario_.comms[comm].name;
    h.summary = fmt::format("{} on comm {} send/recv #{} from rank {} to rank {}: rank {} sends {} (count={} dtype={}) but "
                            "rank {} receives {} (count={} dtype={})",
                            why, scenario_.comms[comm].name, index, sender, receiver, sender, send.name,
                            send.reads.at(0).count, enum_name(send.dtype), receiver, recv.name, recv.writes.at(0).count,
                            enum_name(recv.dtype));
    h.participants = {participant_at(*sides.first), participant_at(*sides.second)};
    hazards_.push_back(std::move(h));
  }
}

void CollectiveDetector::check_order(const IssueEvent& event) {
  std::optional<LastIssue>& slot = last_issue_[event.site.ref.rank * scenario_.comms.size() + event.site.op->comm];
  if (slot) {
    const LastIssue& last = *slot;
    if (last.thread != event.thread_actor && !event.thread_clock->covers(last.thread, last.epoch)) {
      Hazard h;
      h.kind = HazardKind::ordering_hazard;
      h.subject = "comm " + scenario_.comms[event.site.op->comm].name;
      h.summary = fmt::format(
          "rank {} issues {} ({}) and {} ({}) on comm {} from host threads with no happens-before: their order on "
          "the communicator can differ between ranks",
          event.site.ref.rank, last.site.op->name, last.site.lane, event.site.op->name, event.site.lane,
          scenario_.comms[event.site.op->comm].name);
      h.participants = {participant_at(last.site), participant_at(event.site)};
      hazards_.push_back(std::move(h));
    }
  }
  slot = LastIssue{event.thread_actor, (*event.thread_clock)[event.thread_actor], event.site};
}

namespace {

/// The collectives on `comm` in rank r's programs (those NCCL does not discard).
std::uint64_t collectives_in_program(const Scenario& s, RankId r, CommId comm) {
  std::uint64_t n = 0;
  for (const Thread& thread : s.ranks[r].threads) {
    for (const Op& op : thread.program) n += is_collective(op.kind) && op.comm == comm && !is_discarded_collective(op);
  }
  return n;
}

}  // namespace

void CollectiveDetector::on_finish(const Engine&) {
  sort_issues();
  report_mismatches();
  report_p2p_mismatches();
  for (CommId c = 0; c < scenario_.comms.size(); ++c) {
    const Communicator& comm = scenario_.comms[c];
    std::uint64_t most = 0;
    const auto issued = [&](RankId r) { return issued_[r * scenario_.comms.size() + c]; };
    for (RankId r : comm.members) most = std::max(most, issued(r));
    std::vector<RankId> missing;
    std::uint64_t first_missing_seq = most;
    for (RankId r : comm.members) {
      const std::uint64_t n = issued(r);
      if (n < most) {
        missing.push_back(r);
        first_missing_seq = std::min(first_missing_seq, n);
      }
    }
    if (missing.empty()) continue;
    Hazard h;
    h.kind = HazardKind::unjoined_collective;
    h.subject = "comm " + comm.name;
    // The lowest-ranked issuer.
    const OpSite* issuer = first_missing_seq < issue_count_[c] ? &issues_[c][first_missing_seq].front() : nullptr;
    h.summary = fmt::format("rank(s) {} never issued collective #{} on comm {}{}", fmt::join(missing, ", "),
                            first_missing_seq, comm.name,
                            issuer ? fmt::format(" ({} issued by rank {})", issuer->op->name, issuer->ref.rank) : "");
    // Why each member never issued it: its program still holds it (its thread stopped before it),
    // or has no such collective left. A shrink keeps the one it had (shrink_identity.h).
    std::vector<WaitReason> why;
    for (RankId r : missing) {
      const bool in_program = collectives_in_program(scenario_, r, c) > issued(r);
      why.push_back({in_program ? WaitKind::not_issued : WaitKind::never_issues, r, std::nullopt});
    }
    if (issuer) {
      h.participants.push_back(participant_at(*issuer));
      h.participants.back().waits = why;
    }
    for (std::size_t i = 0; i < missing.size(); ++i) {
      h.participants.push_back(Participant{missing[i], "", {missing[i], 0, 0}, "(never issued)", "", 0});
      if (!issuer) h.participants.back().waits = {why[i]};
    }
    hazards_.push_back(std::move(h));
  }
}

}  // namespace amaxcheck
