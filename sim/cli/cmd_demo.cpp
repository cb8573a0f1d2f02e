#include <fmt/format.h>

#include "cli/commands.h"

namespace amaxcheck::cli {

void register_demo(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "check the four seed design points at 8 ranks and print a table");
  add_command(app, sub, [] {
    fmt::print("demo: not implemented yet\n");
    return exit_internal;
  });
}

}  // namespace amaxcheck::cli
