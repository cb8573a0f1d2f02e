#pragma once
/// Timeline export: a trace as Chrome trace-event JSON, which ui.perfetto.dev and
/// chrome://tracing open.
///
/// - one process per rank (pid = rank), one track per host thread (tid = 1 + thread) and per
///   stream (tid = 1000 + stream), named after the lanes;
/// - an X (complete) event per issue and per kernel; a collective spans its member's stream
///   from the member's join to the collective's completion;
/// - flow arrows (s/t/f) link the matched ops of each collective across ranks;
/// - every hazard participant gets an instant event named after the hazard kind, with the
///   summary in its args.
/// Untimed runs use step numbers as time (1 step = 1 us on screen); timed runs use the
/// microseconds of the cost model.

#include <nlohmann/json.hpp>
#include <string>

#include "trace/trace.h"

namespace amaxcheck::sched {

nlohmann::ordered_json to_chrome_trace(const Trace& trace);
/// Writes to_chrome_trace atomically.
void write_chrome_trace_file(const std::string& path, const Trace& trace);

}  // namespace amaxcheck::sched
