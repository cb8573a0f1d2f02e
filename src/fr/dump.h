#pragma once
/// One Flight Recorder dump (one rank), validated into bounded, typed records; and all the dumps
/// of a job, read in parallel.
///
/// Format (PyTorch's Flight Recorder, versions 2.x; unknown fields are ignored):
///   {"version": "2.4", "rank": 0, "pg_config": {name: {"name", "desc", "ranks": "[0, 1]"}},
///    "entries": [entry, ...], ...}
///   entry: record_id, pg_id, process_group [name, desc], collective_seq_id, p2p_seq_id, op_id,
///          profiling_name ("nccl:all_reduce"), input_sizes, input_dtypes, output_sizes,
///          output_dtypes, state (scheduled|started|completed), time_created_ns, is_p2p,
///          timeout_ms, and optionally duration_ms and frames ([{name, filename, line}]).
///
/// Dumps are untrusted and may be huge or hostile, so everything kept is bounded: a file over
/// max_file_bytes, or with more than max_entries entries or max_nodes values, is refused;
/// strings are cut to max_text characters (ending with their length and a digest, so different
/// long names stay different); at most max_frames frames are kept per record, and a frame list
/// that many entries share (a pickle memo) is read once; a string that is not valid UTF-8 (a
/// lone surrogate) is refused, naming the field. Every problem is an InputError naming the file
/// and the field, worded as the Python importer worded it.
///
/// gloo writes a single pg_config entry under the key '' (the last group it created): it is
/// keyed by its own name instead.
///
/// Repeated content is stored once per dump: strings, shapes, dtype lists, frames and call
/// stacks live in tables that records refer to by index.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fr/document.h"

namespace amaxcheck::fr {

inline constexpr std::uintmax_t max_file_bytes = std::uintmax_t{1} << 30;
inline constexpr std::size_t max_entries = std::size_t{1} << 20;
inline constexpr std::size_t max_text = 200;
inline constexpr std::size_t max_frames = 64;
inline constexpr std::int64_t max_rank = std::int64_t{1} << 20;  // ranks run below this

using TextId = std::uint32_t;

enum class State : std::uint8_t { scheduled, started, completed };
inline constexpr const char* state_names[] = {"scheduled", "started", "completed"};

struct Frame {
  TextId name = 0, filename = 0;
  std::int64_t line = 0;
};

struct Record {
  std::uint32_t index = 0;  // position in the dump's entries
  std::int64_t record_id = 0;
  TextId pg_name = 0, pg_desc = 0, profiling_name = 0;
  std::int64_t collective_seq_id = 0, p2p_seq_id = 0, op_id = 0;
  std::uint32_t input_sizes = 0, output_sizes = 0;    // into Dump::shapes
  std::uint32_t input_dtypes = 0, output_dtypes = 0;  // into Dump::string_lists
  State state = State::scheduled;
  bool is_p2p = false;
  std::int64_t time_created_ns = 0;
  std::optional<std::int64_t> timeout_ms;
  std::optional<double> duration_ms;
  std::uint32_t stack = 0;  // into Dump::stacks
  std::uint32_t frames_dropped = 0;
};

struct ProcessGroup {
  std::string key, name, desc;
  std::vector<std::int64_t> ranks;
};

using Shape = std::vector<std::int64_t>;

struct Dump {
  std::string path;
  std::size_t input = 0;  // the position of its file among those read together
  std::int64_t rank = 0;
  std::string version;
  std::vector<ProcessGroup> pg_config;  // in the dump's order, one per key
  std::vector<Record> records;          // in record_id order
  std::vector<std::string> ignored_fields;
  // The tables records refer to. texts[0] is "", string_lists[0], shapes[0] and stacks[0] empty.
  std::vector<std::string> texts;
  std::vector<std::vector<Shape>> shapes;
  std::vector<std::vector<TextId>> string_lists;
  std::vector<Frame> frames;
  std::vector<std::vector<std::uint32_t>> stacks;
};

enum class DumpFormat { auto_detect, pickle, json };

/// `doc` validated as the dump of `path`; `fallback_rank` when neither the dump nor its file
/// name says the rank.
Dump validate_dump(const Document& doc, const std::string& path, std::int64_t fallback_rank);

/// The file read (JSON when asked, or when it starts with '{' or '['; else pickle) and
/// validated.
Dump load_dump(const std::string& path, DumpFormat format, std::int64_t fallback_rank);

/// Every file, on up to `jobs` threads, sorted by rank; two dumps of one rank are an error. The
/// first error in `paths` order is thrown, so the message does not depend on the timing.
std::vector<Dump> load_dumps(const std::vector<std::string>& paths, DumpFormat format, unsigned jobs);

/// PyTorch names dumps <prefix><rank> (default /tmp/nccl_trace_rank_<rank>): the trailing
/// number, before an optional .extension.
std::optional<std::int64_t> rank_from_name(const std::string& path);

/// `text` cut to max_text characters, ending with its length and a digest of the whole;
/// InputError naming `where` when it is not valid UTF-8.
std::string bounded_text(std::string_view text, const std::string& where);

}  // namespace amaxcheck::fr
