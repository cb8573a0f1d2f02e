#pragma once
/// Scenario files: JSON <-> Scenario. Documented in traces/SCENARIO.md.
///
/// A scenario file either names a protocol and its knobs, or writes the per-rank programs out
/// in full (threads, streams, events, buffers, communicators, ops). Every error is an
/// InputError naming the field path (e.g. `ranks[1].threads[0].program[3].reads[0].count`)
/// and what was expected.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "model/scenario.h"
#include "model/scenario_size.h"
#include "protocols/protocol.h"

namespace amaxcheck {

/// The full, explicit form of a scenario (always written out in full, never as a protocol).
/// Without `cost_sizes` the ops' `cost_bytes` / `cost_flops` are left out: a trace embeds and
/// hashes a scenario that way, since they change nothing an untimed run records.
nlohmann::json scenario_to_json(const Scenario& scenario, bool cost_sizes = true);

/// Parses either form. `where` names the source (a file path) for error messages; it also
/// becomes the explicit form's name and source when the document has none. The protocol form
/// is built with build_protocol (its source is the equivalent command line). The explicit
/// form is validated by validate_scenario (scenario_validate.h).
///
/// `before_build`, when given, sees the size of what is about to be built, and throws
/// InputError to refuse it: building a large point can itself take gigabytes (the CLI's
/// --max-memory estimate runs there). It is called with a protocol form's size, from its knobs
/// (`what`: "protocol point"), and with an explicit form's rank templates' expansion, an upper
/// bound read before they are expanded ("expanded rank templates").
using BeforeBuild = std::function<void(const ScenarioSize& size, const std::string& what)>;
Scenario scenario_from_json(const nlohmann::json& doc, const std::string& where, const BeforeBuild& before_build = {});

/// Reads and parses a scenario file (io/json_text.h: syntax errors, overflowing numbers and
/// deep nesting name the line). A path that is not UTF-8 is printed escaped, and so named.
/// Any other exception while reading becomes an InputError naming the file.
Scenario load_scenario_file(const std::string& path, const BeforeBuild& before_build = {});

/// scenario_to_json as text: indented, with short values (an op, a range) on one line.
std::string scenario_to_text(const Scenario& scenario);

/// Writes scenario_to_text(scenario) atomically (a temporary file, then a rename).
void save_scenario_file(const Scenario& scenario, const std::string& path);

}  // namespace amaxcheck
