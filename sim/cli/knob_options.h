#pragma once
/// The protocol knobs as command-line options: one `--<knob>` per entry of the knob table
/// (src/protocols/knob_table.h). CLI11 stays in the CLI; the core library only has the table.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "protocols/protocol.h"

namespace amaxcheck::cli {

/// Adds one `--<knob>` option per knob to `app`, writing into `knobs` (which must outlive the
/// parse). A bad value is a CLI11 validation error naming the option and what was expected.
/// `given`, when not null, collects the options given ("--dp").
void add_knob_options(CLI::App& app, ProtocolKnobs& knobs, std::vector<std::string>* given = nullptr);

}  // namespace amaxcheck::cli
