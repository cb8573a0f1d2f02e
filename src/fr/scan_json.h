#pragma once
/// The dumps as `amaxcheck fr-scan` prints them for the Python side of `import-fr`
/// (harness/amaxharness/fr/dump.py reads it): JSON Lines, one compact object per dump in rank
/// order (so the reader can drop each line once read), with the dump's tables once and its
/// records as rows of table indices. The layout is an interface between the two halves of one
/// tool, not a file format: both change together.
///
///   {"input": i, "rank", "version", "pg_config": [[key, name, desc, [ranks]]],
///    "ignored_fields": [...], "texts": [...], "shapes": [[[dims]]], "string_lists": [[text]],
///    "frames": [[name, filename, line]], "stacks": [[frame]], "records": [[row]]}
///   a record row, in record_row_fields order (indices into the dump's tables, or values).

#include <string>
#include <vector>

#include "fr/dump.h"

namespace amaxcheck::fr {

inline constexpr const char* record_row_fields[] = {
    "index", "record_id", "pg_name", "pg_desc", "collective_seq_id", "p2p_seq_id", "op_id", "profiling_name",
    "input_sizes", "input_dtypes", "output_sizes", "output_dtypes", "state", "is_p2p", "time_created_ns",
    "timeout_ms", "duration_ms", "stack", "frames_dropped"};

/// `dumps` as above.
std::string scan_json(const std::vector<Dump>& dumps);
/// One dump's line.
std::string scan_json_line(const Dump& dump);

/// The files read (load_dumps, dump.h) and printed as above, each on the thread that read it.
std::string scan_dumps(const std::vector<std::string>& paths, DumpFormat format, unsigned jobs);

}  // namespace amaxcheck::fr
