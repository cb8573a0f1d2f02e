#pragma once
/// How `check --backend gpu` reaches the other processes of an mpirun / srun launch.
///
/// The CLI's code never names MPI: a program that can talk to its peers registers a factory
/// before it runs the CLI (amaxcheck-mpi registers MpiExchange in main_mpi.cpp). amaxcheck
/// registers none, so under a multi-process launch it stops with a pointer to amaxcheck-mpi
/// instead of running every rank in every process.

#include <functional>
#include <memory>

#include "cuda/bootstrap.h"

namespace amaxcheck::cli {

using ExchangeFactory = std::function<std::unique_ptr<gpu::IdExchange>()>;

/// Registers the factory (call from main, before run_main). An empty function unregisters.
void set_exchange_factory(ExchangeFactory factory);

/// Whether this program can join a multi-process launch.
bool have_exchange_factory();

/// A new exchange from the factory (for MPI this initializes MPI); nullptr without a factory.
std::unique_ptr<gpu::IdExchange> make_launch_exchange();

/// Where the MPI program is, relative to the build folder; for messages.
inline constexpr const char* mpi_program_path = "sim/amaxcheck-mpi";

}  // namespace amaxcheck::cli
