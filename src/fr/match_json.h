#pragma once
/// What `amaxcheck fr-scan` prints for the Python side of `import-fr`
/// (harness/amaxharness/fr/dump.py reads it): the dumps read (load_dumps), aligned (align.h),
/// matched (agreement.h, inversion.h) and windowed (window.h), as one compact JSON document
/// holding the findings and only the records the report and the replay scenario need: those of
/// each group's first divergence, of the inversions, and of the scenario's window. The layout is
/// an interface between the two halves of one tool, not a file format: both change together.
///
///   {"dumps": [{"input", "rank", "version", "records": count, "wrapped"}],
///    "groups": [{"name", "desc", "backends", "members", "dumped", "window": [lo, hi], "matched",
///                "divergent", "first": divergence|null, "membership": [[kind, text]],
///                "undecidable": [[rank, why]], "divergent_seqs": [[seq, [kind], [rank]]]}],
///    "inversions": [divergence], "p2p_ignored", "notes", "missing_ranks",
///    "scenario_window": [[first, last]] (per group), "kept": [[record]] (per dump),
///    "records": [row], "texts": [...], "frames": [[name, filename, line]], "stacks": [[frame]]}
///   divergence: {"group", "seq", "findings": [[kind, text]], "ranks", "records": [[rank, [record]]],
///                "other": [group, seq]|null, "time_ns", "deadlocks"}
///   a record row, in record_row_fields order (texts, frames and stacks by index into the tables).

#include <cstdint>
#include <string>
#include <vector>

#include "fr/agreement.h"
#include "fr/window.h"

namespace amaxcheck::fr {

inline constexpr const char* record_row_fields[] = {
    "rank",        "index",        "record_id",    "pg_name",       "pg_desc",         "collective_seq_id",
    "p2p_seq_id",  "op_id",        "profiling_name", "input_sizes", "input_dtypes",    "output_sizes",
    "output_dtypes", "state",      "is_p2p",       "time_created_ns", "timeout_ms",    "duration_ms",
    "stack",       "frames_dropped"};

struct MatchOptions {
  Kernels kernels = Kernels::auto_detect;
  std::int64_t window = 8;  // collectives per group kept in the scenario (window.h)
};

/// The document above for an aligned and matched job.
std::string match_json(const Job& job, const Alignment& alignment, const AgreementReport& report,
                       const ScenarioWindow& window);

/// The files read (load_dumps), matched and printed as above.
std::string match_dumps(const std::vector<std::string>& paths, DumpFormat format, unsigned jobs,
                        const MatchOptions& options);

}  // namespace amaxcheck::fr
