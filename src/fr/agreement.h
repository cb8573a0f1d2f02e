#pragma once
/// Collective agreement across ranks, from Flight Recorder records aligned per group (align.h).
///
/// Per process group, the k-th collective a rank issues carries collective_seq_id k on every
/// member, so records are matched by (group, collective_seq_id). Matched records must agree on
/// the operation, the sizes and the dtypes (else the backend pairs different operations: a hang,
/// or silent corruption when the sizes happen to fit), every member must have issued it (else the
/// others wait forever), and their states should agree (not compared for gloo, which records
/// every collective as `scheduled`). Only the seqs some rank recorded are visited, so the work is
/// linear in the records, whatever the seq values; the common case (every rank alike) costs one
/// comparison of integer signatures (job.h) per rank.
///
/// Members come from the dumps' pg_config (the majority view; the dumps disagreeing is itself a
/// finding), else from the ranks that recorded the group. A member without a dump, or one whose
/// wrapped buffer holds no record of the group, is undecidable: the verdict is then never
/// "consistent" (inconclusive, unless a divergence is found elsewhere).
///
/// Cross-group order inversions are inversion.h's. Point-to-point records are not matched; they
/// are counted. The findings' words are the report's (show.h); the report itself is written by
/// the harness (harness/amaxharness/fr/render.py) from match_json.h's document.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fr/align.h"

namespace amaxcheck::fr {

enum class FindingKind : std::uint8_t {
  not_joined, type_mismatch, size_mismatch, dtype_mismatch, state_mismatch, membership_mismatch, order_inversion
};
inline constexpr const char* finding_kind_names[] = {"not_joined",     "type_mismatch",       "size_mismatch",
                                                     "dtype_mismatch", "state_mismatch",      "membership_mismatch",
                                                     "order_inversion"};

struct Finding {
  FindingKind kind = FindingKind::not_joined;
  std::string text;
};

struct Divergence {
  std::string group;
  std::optional<std::int64_t> seq;
  std::vector<Finding> findings;
  std::vector<std::int64_t> ranks;  // the ranks that deviate (or do not join), sorted
  std::vector<std::pair<std::int64_t, std::vector<RecordRef>>> records;  // rank -> its records here
  std::optional<std::pair<std::string, std::int64_t>> other;  // order inversion: the other group, its seq
  std::optional<std::int64_t> time_ns;  // the earliest time_created_ns of its records (0s ignored)
  bool deadlocks = true;                // order inversion: under the kernels rule that applies
};

struct DivergentSeq {
  std::int64_t seq = 0;
  std::vector<FindingKind> kinds;  // sorted, distinct
  std::vector<std::int64_t> ranks;
};

struct GroupReport {
  std::string name, desc;
  std::vector<std::string> backends;
  std::vector<std::int64_t> members;
  std::vector<std::int64_t> dumped;  // members that have a dump
  std::int64_t lo = 0, hi = 0;       // the collective_seq_ids compared
  std::size_t matched = 0, divergent = 0;
  std::optional<Divergence> first;
  std::vector<Finding> membership;  // membership_mismatch findings (the dumps' pg_config disagree)
  std::vector<std::pair<std::int64_t, std::string>> undecidable;  // rank -> why, by rank
  std::vector<DivergentSeq> divergent_seqs;
};

/// Collective kernel concurrency: under `serialized` (NCCL < 2.26) a cross-group order
/// inversion deadlocks; `auto` takes it from each group's backend (inversion.h).
enum class Kernels : std::uint8_t { auto_detect, serialized, concurrent };

struct AgreementReport {
  std::vector<GroupReport> groups;  // in Alignment::groups order
  std::vector<Divergence> inversions;
  std::size_t p2p_ignored = 0;
  std::vector<std::string> notes;
  std::vector<std::int64_t> missing_ranks;  // ranks known to exist that have no dump
};

/// Every group, the inversions, the missing ranks.
AgreementReport check(const Job& job, const Alignment& alignment, Kernels kernels);

/// The earliest non-zero time_created_ns of `records`.
std::optional<std::int64_t> earliest(const Job& job,
                                     const std::vector<std::pair<std::int64_t, std::vector<RecordRef>>>& records);

}  // namespace amaxcheck::fr
