// amaxcheck-mpi: the same CLI as amaxcheck, plus an MPI exchange for GPU runs launched by
// mpirun / srun with one process per GPU (launch mode 2). Only this program links libmpi: the
// machines the GPU checks run on may have none, and amaxcheck must start there.
//
// MPI is initialized only when `check --backend gpu` finds a multi-process launch, so
// amaxcheck-mpi run by hand behaves exactly like amaxcheck.
#include <memory>

#include "cli/commands.h"
#include "cli/launch_exchange.h"
#include "cuda/bootstrap_mpi.h"

int main(int argc, char** argv) {
  amaxcheck::cli::set_exchange_factory([] { return std::make_unique<amaxcheck::gpu::MpiExchange>(); });
  return amaxcheck::cli::run_main(argc, argv);
}
