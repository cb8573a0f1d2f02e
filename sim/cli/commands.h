#pragma once
/// The CLI's subcommands. Each lives in its own cmd_*.cpp and registers itself through
/// register_commands; main() only calls run_main (amaxcheck-mpi registers an MPI exchange
/// first, see launch_exchange.h).

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace amaxcheck::cli {

/// Exit codes. 0 only for a verdict that stands: proven clean, or no hazard found by a sample
/// that nothing cut short. A run or search cut short (step cap, schedule cap, preemption
/// bound, time budget) without a hazard is inconclusive, 4; a hazard found is 1 even then.
inline constexpr int exit_clean = 0;
inline constexpr int exit_hazard = 1;
inline constexpr int exit_bad_input = 2;
inline constexpr int exit_internal = 3;
inline constexpr int exit_inconclusive = 4;
/// The GPU, its driver or NCCL failed at run time (DeviceError: a CUDA or NCCL error code
/// outside a replay's own hang handling). Not the input's fault, and not an amaxcheck bug.
inline constexpr int exit_device = 5;

/// The exit codes as `--help` lists them.
inline constexpr const char* exit_codes_help =
    "exit codes: 0 proven clean or no hazard found, 1 hazard, 2 bad input, 3 internal error, 4 inconclusive (a step "
    "cap, schedule cap, preemption bound or time budget cut the check short), 5 device error (CUDA or NCCL failed)";
/// suite and demo: the exit code says whether the cases met their expectations, not whether
/// a hazard was found (the demo expects three).
inline constexpr const char* suite_exit_codes_help =
    "exit codes: 0 every case met its expectation, 1 a case did not (named in the summary), 2 bad input, 3 "
    "internal error, 4 no case failed but one was inconclusive within its budget";

const char* tool_version();

/// The whole program: parses argv, runs the subcommand, returns the exit code (2 on a parse
/// error). Shared by amaxcheck and amaxcheck-mpi.
int run_main(int argc, char** argv);

/// Registers every subcommand on `app`.
void register_commands(CLI::App& app);
/// Runs the parsed subcommand, mapping InputError to 2, InternalError (and any other escaping
/// exception) to 3 and DeviceError to 5.
int run_selected(CLI::App& app);

/// A subcommand's body; registered with add_command.
using CommandBody = std::function<int()>;
void add_command(CLI::App& app, CLI::App* sub, CommandBody body);

// One registration function per subcommand file.
void register_check(CLI::App& app);
void register_replay(CLI::App& app);
void register_shrink(CLI::App& app);
void register_export(CLI::App& app);
void register_protocols(CLI::App& app);
void register_demo(CLI::App& app);
void register_suite(CLI::App& app);
void register_hazard_kinds(CLI::App& app);
void register_fr_scan(CLI::App& app);

}  // namespace amaxcheck::cli
