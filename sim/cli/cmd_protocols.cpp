#include "cli/commands.h"

namespace amaxcheck::cli {

// Placeholder until the owning issue lands; registers nothing.
void register_protocols(CLI::App&) {}

}  // namespace amaxcheck::cli
