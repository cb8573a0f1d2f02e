// Command-line options for the strategies' parameters: one `--<name>` per entry parameter.
#include "cli/strategy_options.h"

#include <fmt/format.h>

#include "cli/whole_number.h"
#include "scheduler/strategy_table.h"

namespace amaxcheck::cli {
namespace {

/// An option of C++ type T that stores the value given, as text, under the parameter's name.
template <class T>
CLI::Option* add_typed(CLI::App& group, const sched::StrategyParam& param, sched::StrategyArgs& args) {
  return group.add_option_function<T>(
      std::string("--") + param.name, [&args, name = std::string(param.name)](const T& value) { args.set(name, value); },
      param.help);
}

CLI::Option* add_param(CLI::App& group, const sched::StrategyParam& param, sched::StrategyArgs& args) {
  switch (param.type) {
    case sched::ParamType::flag:
      return group.add_flag_function(
          std::string("--") + param.name,
          [&args, name = std::string(param.name)](std::int64_t count) { args.set(name, count > 0); }, param.help);
    case sched::ParamType::count: return add_typed<std::uint64_t>(group, param, args)->check(whole_number());
    case sched::ParamType::integer: return add_typed<std::int64_t>(group, param, args);
    case sched::ParamType::number: return add_typed<double>(group, param, args);
    case sched::ParamType::choice: return add_typed<std::string>(group, param, args);
  }
  return nullptr;
}

}  // namespace

void add_strategy_options(CLI::App& app, sched::StrategyArgs& args) {
  for (const sched::StrategyEntry& entry : sched::strategy_table()) {
    if (entry.params.empty()) continue;
    CLI::App* group = app.add_option_group(fmt::format("--strategy {}", entry.name), entry.help);
    for (const sched::StrategyParam& param : entry.params) {
      CLI::Option* option = add_param(*group, param, args);
      if (param.show_default && param.type != sched::ParamType::flag) option->default_str(param.default_value);
    }
  }
}

std::string strategy_option_help() {
  std::string help = sched::strategy_choices();
  for (const sched::StrategyEntry& entry : sched::strategy_table()) help += fmt::format("\n  {}: {}", entry.name, entry.help);
  return help;
}

}  // namespace amaxcheck::cli
