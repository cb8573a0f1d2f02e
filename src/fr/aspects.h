#pragma once
/// What records matched at one (group, collective_seq_id) must agree on, and which ranks stand
/// out (agreement.h applies it per seq).
///
/// Each aspect (the operation without its backend prefix, the sizes, the dtypes, the state) is an
/// integer per record (job.h's interned ids), so ranks fall into blocks that agree; the ranks
/// outside the largest block deviate, or every rank when the largest blocks tie. all_to_all's
/// splits may legitimately differ per rank, so its sizes always agree.

#include <cstdint>
#include <string>
#include <vector>

#include "fr/agreement.h"

namespace amaxcheck::fr {

using Refs = std::vector<RecordRef>;

/// One rank's records at the seq being matched (usually one).
struct Have {
  std::int64_t rank = 0;
  Refs records;
};

enum class Aspect : std::uint8_t { operations, sizes, dtypes, states };
inline constexpr Aspect aspects[] = {Aspect::operations, Aspect::sizes, Aspect::dtypes, Aspect::states};

FindingKind kind_of(Aspect aspect);

/// Every rank's records equal in every aspect, the profiling name compared in full (states only
/// when `states`): the common case, one comparison per rank.
bool all_alike(const Job& job, const std::vector<Have>& have, bool states);

/// The ranks that deviate in `aspect` (`have` in rank order), sorted; with `text`, the finding
/// that names every block and shows its records ("sizes differ: ranks 0, 2: in [[8]] out [[8]];
/// rank 1: ...").
std::vector<std::int64_t> deviants(const Job& job, Aspect aspect, const std::vector<Have>& have, std::string* text);

}  // namespace amaxcheck::fr
