#pragma once
/// Trace files: one run, written as JSON Lines (specified in traces/FORMAT.md).
///
/// Line 1 is the header: format name and version, tool version, the scenario (embedded in
/// full when src/io can serialize it, and always its content hash), the strategy, the seed
/// and every parameter derived from them. Then one line per step (the action, its lane, op,
/// communicator and sequence number, the choice with its option count, small written values,
/// and for timed runs its start and end time), one line per hazard, and a summary line.
///
/// Writing is deterministic (fixed key order, no clocks, no addresses) so the same scenario
/// and seed give byte-identical files, and atomic (a temporary file, then a rename). Reading
/// validates every field and reports "FILE:LINE: field NAME: expected ..., got ..." as an
/// InputError.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "detectors/hazard.h"
#include "engine/engine.h"
#include "scheduler/replay_strategy.h"
#include "scheduler/run.h"
#include "scheduler/strategy.h"
#include "scheduler/timed_strategy.h"

namespace amaxcheck::sched {

inline constexpr const char* trace_format_name = "amaxcheck-trace";
inline constexpr int trace_format_version = 1;

struct TraceHeader {
  int format_version = trace_format_version;
  std::string tool_version;
  std::string scenario_name;
  std::string scenario_source;  ///< how to rebuild the scenario (Scenario::source)
  std::string scenario_hash;    ///< scenario_hash() of the scenario the run used
  std::optional<nlohmann::json> scenario;  ///< embedded full form, when available
  std::string strategy;         ///< Strategy::name()
  std::uint64_t seed = 0;
  std::uint64_t run_index = 0;
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();  ///< strategy's
  nlohmann::ordered_json engine = nlohmann::ordered_json::object();      ///< engine options
};

struct TraceStep {
  std::size_t step = 0;
  Action action;
  std::string lane;  ///< "thread main", "stream compute", "comm dp"
  OpRef op;
  std::string op_name;
  bool collective = false;
  CommId comm = 0;
  std::uint64_t seq = 0;
  Choice choice;
  std::vector<WrittenValues> written;
  std::optional<StepTiming> timing;  ///< timed runs
  std::size_t line = 0;  ///< the trace line it was read from (0: not read from a file)
};

struct TraceSummary {
  RunOutcome outcome = RunOutcome::finished;
  std::size_t steps = 0;
  std::size_t hazards = 0;
  std::optional<double> makespan_us;      ///< timed runs
  std::vector<double> rank_end_us;        ///< timed runs: each rank's iteration time
  std::size_t line = 0;                   ///< the trace line it was read from (0: not read)
};

struct Trace {
  TraceHeader header;
  std::vector<TraceStep> steps;
  std::vector<Hazard> hazards;
  TraceSummary summary;

  std::vector<Choice> choices() const;
  std::vector<ExpectedStep> expected_steps() const;
};

/// What a trace says about where its run came from.
struct TraceOrigin {
  std::string strategy;
  std::uint64_t seed = 0;
  std::uint64_t run_index = 0;
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();
};

/// Builds the trace of `run` (which must have recorded its steps) of `scenario`.
Trace make_trace(const Scenario& scenario, const RunResult& run, const TraceOrigin& origin,
                 const EngineOptions& engine = {}, const TimedRun* timing = nullptr);

/// The JSON Lines text of a trace (each line ends with '\n').
std::string trace_to_jsonl(const Trace& trace);
/// Parses trace text; `where` names it in errors (a file path).
Trace parse_trace(std::string_view text, const std::string& where);

/// Writes atomically; InputError when the file cannot be written.
void write_trace_file(const std::string& path, const Trace& trace);
/// Reads and validates; InputError naming the file, line and field on anything malformed.
Trace read_trace_file(const std::string& path);

/// The engine options a trace header records, and back.
nlohmann::ordered_json engine_options_to_json(const EngineOptions& options);
EngineOptions engine_options_from_json(const nlohmann::json& json, const std::string& where);

}  // namespace amaxcheck::sched
