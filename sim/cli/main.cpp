// amaxcheck: thin main. Each subcommand lives in its own file and registers itself
// (cli/commands.h); this program never links MPI (amaxcheck-mpi is main_mpi.cpp).
#include "cli/commands.h"

int main(int argc, char** argv) { return amaxcheck::cli::run_main(argc, argv); }
