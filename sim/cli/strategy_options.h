#pragma once
/// The strategies' parameters as command-line options: one `--<name>` per parameter of every
/// entry of the strategy table (sim/scheduler/strategy_table.h), grouped by strategy in --help,
/// like knob_options.h does for the protocol knobs. CLI11 stays in the CLI.

#include <CLI/CLI.hpp>

#include "scheduler/strategy_params.h"

namespace amaxcheck::cli {

/// Adds the options to `app`, writing the values given into `args` (which must outlive the
/// parse). A value of the wrong type is a CLI11 error naming the option; the rest of a value's
/// checks (a choice, a positive number) is sched::check_strategy_args.
void add_strategy_options(CLI::App& app, sched::StrategyArgs& args);

/// "random | pct | ...", then one "  <name>: <help>" line per strategy: the --strategy help.
std::string strategy_option_help();

}  // namespace amaxcheck::cli
