#include "cli/commands.h"

#include <fmt/format.h>

#include <exception>
#include <map>

#include "util/check.h"

namespace amaxcheck::cli {
namespace {
std::map<const CLI::App*, CommandBody>& bodies() {
  static std::map<const CLI::App*, CommandBody> table;
  return table;
}
}  // namespace

const char* tool_version() { return "0.1.0"; }

void add_command(CLI::App&, CLI::App* sub, CommandBody body) { bodies()[sub] = std::move(body); }

void register_commands(CLI::App& app) {
  register_check(app);
  register_replay(app);
  register_shrink(app);
  register_export(app);
  register_protocols(app);
  register_demo(app);
  register_suite(app);
  register_hazard_kinds(app);
  register_fr_scan(app);
}

int run_main(int argc, char** argv) {
  CLI::App app{"amaxcheck: verify how FP8 training stacks synchronise amax and scales across GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", tool_version());
  app.footer(exit_codes_help);
  register_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_bad_input;
  }
  return run_selected(app);
}

int run_selected(CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    auto it = bodies().find(sub);
    if (it == bodies().end()) continue;
    try {
      return it->second();
    } catch (const InputError& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      return exit_bad_input;
    } catch (const InternalError& e) {
      fmt::print(stderr, "{}\n", e.what());
      return exit_internal;
    } catch (const DeviceError& e) {
      fmt::print(stderr, "device error: {}\n", e.what());
      return exit_device;
    } catch (const std::exception& e) {
      fmt::print(stderr, "internal error: {}\n", e.what());
      return exit_internal;
    }
  }
  return exit_bad_input;
}

}  // namespace amaxcheck::cli
