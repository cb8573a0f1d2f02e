// amaxcheck: thin main. Each subcommand lives in its own file and registers itself here.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "util/check.h"

int main(int argc, char** argv) {
  CLI::App app{"amaxcheck: verify how FP8 training stacks synchronise amax and scales across GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", amaxcheck::cli::tool_version());
  amaxcheck::cli::register_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return amaxcheck::cli::exit_bad_input;
  }
  return amaxcheck::cli::run_selected(app);
}
