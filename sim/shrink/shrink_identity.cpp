#include "shrink/shrink_identity.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "detectors/deadlock_detector.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

bool is_value_kind(HazardKind kind) {
  return kind == HazardKind::value_mismatch || kind == HazardKind::replica_divergence;
}

/// Whether a participant names a real op of the scenario, rather than only a rank (a rank
/// that never issued a collective, a buffer's final value).
bool names_an_op(const Participant& p, const Scenario& s) {
  if (p.op.rank != p.rank || p.rank >= s.ranks.size() || p.op.thread >= s.ranks[p.rank].threads.size()) return false;
  const auto& program = s.ranks[p.rank].threads[p.op.thread].program;
  return p.op.index < program.size() && program[p.op.index].name == p.op_name;
}

std::string original_op(const OpRef& ref, const Scenario& s, const Lineage& lineage) {
  const OpRef o = lineage.original(ref);
  return fmt::format("rank {} thread {} op #{} {}", o.rank, s.ranks[ref.rank].threads[ref.thread].name, o.index,
                     s.ranks[ref.rank].threads[ref.thread].program[ref.index].name);
}

/// A stuck op's reasons in the original's terms, sorted: "a rank whose program never issues the
/// matching op (rank 1)", "a rank whose stream has not reached the matching op (rank 0, behind
/// rank 0 thread main op #0 send_activation)".
std::vector<std::string> original_waits(const std::vector<WaitReason>& waits, const Scenario& s, const Lineage& lineage) {
  std::vector<std::string> out;
  for (const WaitReason& w : waits) {
    std::string text = fmt::format("{} (rank {}", to_string(w.kind), lineage.ranks.at(w.rank));
    if (w.behind) text += ", behind " + original_op(*w.behind, s, lineage);
    out.push_back(text + ")");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string original_participant(const Participant& p, const Scenario& s, const Lineage& lineage) {
  // The lane stays in: a deadlocked op stuck on its thread (never issued) and the same op
  // stuck on its stream (issued, blocked) are different bugs.
  std::string text = names_an_op(p, s) ? original_op(p.op, s, lineage)
                                       : fmt::format("rank {} {}", lineage.ranks.at(p.rank), p.op_name);
  if (!p.lane.empty()) text += " on " + p.lane;
  if (p.access != Access::none) text += fmt::format(" {}", to_string(p.access));
  if (!p.waits.empty()) text += fmt::format(" waiting for {}", fmt::join(original_waits(p.waits, s, lineage), " and "));
  return text;
}

const Op& op_at(const Scenario& s, const OpRef& ref) { return s.ranks[ref.rank].threads[ref.thread].program[ref.index]; }

/// The replica ranges a value hazard is about: the subject's check (or, when the detector
/// names no subject, the checks of the participant's buffer) on each participant's rank.
std::vector<ReplicaCheck::Replica> checked_ranges(const Hazard& h, const Scenario& s) {
  std::vector<ReplicaCheck::Replica> ranges;
  for (const Participant& p : h.participants) {
    for (const ReplicaCheck& check : s.checks) {
      if (!h.subject.empty() && check.tensor != h.subject) continue;
      for (const auto& replica : check.replicas) {
        if (replica.rank != p.rank) continue;
        if (h.subject.empty() && p.lane != "buffer " + s.ranks[p.rank].buffers[replica.range.buffer].name) continue;
        ranges.push_back(replica);
      }
    }
  }
  return ranges;
}

/// The op that last wrote `replica`'s range in the run, and the range's final values, read
/// from the steps (each collective's op on each member found through its issue step).
struct Produced {
  std::optional<OpRef> last;
  std::vector<float> values;
};

/// A comm op's issue, as its completion names it. A collective's seq counts on its
/// communicator, a send's or recv's per pair and direction (the engine's p2p_issued), so a
/// p2p op's key holds its peer and direction too: (rank, comm, seq) alone would let a later send
/// of the rank overwrite the recv the completion wrote through.
enum class Side : std::uint8_t { collective, send, recv };
using IssuedKey = std::tuple<RankId, CommId, std::uint64_t, RankId /* p2p: the peer */, Side>;

IssuedKey issued_key(const Scenario& s, const OpRef& ref, CommId comm, std::uint64_t seq) {
  const Op& op = op_at(s, ref);
  if (!is_p2p(op.kind)) return {ref.rank, comm, seq, 0, Side::collective};
  return {ref.rank, comm, seq, s.comms[comm].members.at(op.peer), op.kind == OpKind::send ? Side::send : Side::recv};
}

/// The op on `rank` that the completion `step` ran, if `rank` took part: a collective's member
/// op, or of a send / recv pair (the step names the send) the side on `rank`.
std::optional<OpRef> completed_op(const Scenario& s, const Step& step, RankId rank, const std::map<IssuedKey, OpRef>& issued) {
  const Op& first = op_at(s, step.op);
  std::optional<IssuedKey> key;
  if (!is_p2p(first.kind)) {
    if (member_index(s.comms[step.comm], rank) >= 0) key = IssuedKey{rank, step.comm, step.seq, 0, Side::collective};
  } else {
    const RankId sender = step.op.rank;
    const RankId receiver = s.comms[step.comm].members.at(first.peer);
    // The receiver first: a rank that sends to itself is written by its recv, not its send.
    if (rank == receiver) key = IssuedKey{receiver, step.comm, step.seq, sender, Side::recv};
    else if (rank == sender) return step.op;
  }
  if (!key) return std::nullopt;
  auto it = issued.find(*key);
  AMAX_CHECK(it != issued.end(), "a collective completed on a member that never issued it");
  return it->second;
}

Produced produced(const Scenario& s, const std::vector<Step>& steps, const ReplicaCheck::Replica& replica) {
  const Buffer& buffer = s.ranks[replica.rank].buffers[replica.range.buffer];
  Produced out;
  for (std::uint32_t i = 0; i < replica.range.count; ++i) {
    const std::size_t at = replica.range.offset + i;
    out.values.push_back(at < buffer.init.size() ? buffer.init[at] : 0.0f);
  }
  std::map<IssuedKey, OpRef> issued;
  for (const Step& step : steps) {
    std::optional<OpRef> writer;
    if (step.action.kind == ActionKind::issue && step.collective) issued[issued_key(s, step.op, step.comm, step.seq)] = step.op;
    if (step.action.kind == ActionKind::execute && step.op.rank == replica.rank) writer = step.op;
    if (step.action.kind == ActionKind::complete) writer = completed_op(s, step, replica.rank, issued);
    if (!writer) continue;
    for (const Range& range : op_at(s, *writer).writes) {
      if (!range.overlaps(replica.range)) continue;
      out.last = *writer;
      bool recorded = false;
      for (const WrittenValues& w : step.written) {
        if (w.rank != replica.rank || !(w.range == range)) continue;
        recorded = true;
        for (std::uint32_t i = 0; i < w.range.count; ++i) {
          const std::uint32_t at = w.range.offset + i;
          if (at >= replica.range.offset && at < replica.range.offset + replica.range.count) out.values[at - replica.range.offset] = w.values[i];
        }
      }
      AMAX_CHECK(recorded, "a value hazard's identity needs every written value (see identity_options)");
    }
  }
  return out;
}

std::vector<std::string> producers(const Hazard& h, const Scenario& s, const Lineage& lineage, const RunResult& run) {
  AMAX_CHECK(run.steps.size() == run.step_count, "a value hazard's identity needs the run's steps (see identity_options)");
  std::vector<std::string> out;
  for (const auto& replica : checked_ranges(h, s)) {
    const Produced p = produced(s, run.steps, replica);
    const std::string& buffer = s.ranks[replica.rank].buffers[replica.range.buffer].name;
    const std::string values = fmt::format("[{}]", fmt::join(p.values, ", "));
    out.push_back(p.last ? fmt::format("{} wrote {} = {}", original_op(*p.last, s, lineage), buffer, values)
                         : fmt::format("rank {} buffer {} kept its initial value {}", lineage.ranks.at(replica.rank), buffer, values));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::string HazardIdentity::show() const {
  std::string text = to_string(kind);
  if (!subject.empty()) text += " on " + subject;
  if (kind == HazardKind::deadlock) text += cycle ? " (wait-for cycle)" : " (hang, no cycle)";
  text += ": " + fmt::format("{}", fmt::join(participants, kind == HazardKind::data_race ? ", then " : "; "));
  if (!producers.empty()) text += fmt::format("; produced by {}", fmt::join(producers, "; "));
  return text;
}

bool identity_needs_steps(HazardKind kind) { return is_value_kind(kind); }

RunOptions identity_options(RunOptions options, HazardKind kind) {
  if (!identity_needs_steps(kind)) return options;
  options.record_steps = true;
  options.engine.step_detail = StepDetail{false, true, false};
  options.engine.record_values_up_to = std::numeric_limits<std::size_t>::max();
  return options;
}

HazardIdentity identity_of(const Hazard& hazard, const Scenario& scenario, const Lineage& lineage, const RunResult& run) {
  HazardIdentity id;
  id.kind = hazard.kind;
  id.subject = hazard.subject;
  id.cycle = hazard.kind == HazardKind::deadlock && is_wait_for_cycle(hazard);
  for (const Participant& p : hazard.participants) id.participants.push_back(original_participant(p, scenario, lineage));
  if (hazard.kind != HazardKind::data_race) {
    std::sort(id.participants.begin(), id.participants.end());
    id.participants.erase(std::unique(id.participants.begin(), id.participants.end()), id.participants.end());
  }
  if (is_value_kind(hazard.kind)) id.producers = producers(hazard, scenario, lineage, run);
  return id;
}

const Hazard* find_same_bug(const HazardIdentity& original, const Scenario& scenario, const Lineage& lineage,
                            const RunResult& run) {
  for (const Hazard& h : run.hazards) {
    if (h.kind == original.kind && identity_of(h, scenario, lineage, run) == original) return &h;
  }
  return nullptr;
}

bool same_bug(const HazardIdentity& original, const Scenario& scenario, const Lineage& lineage, const RunResult& run) {
  return find_same_bug(original, scenario, lineage, run) != nullptr;
}

}  // namespace amaxcheck::sched
