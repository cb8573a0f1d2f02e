#pragma once
/// The parameters of a strategy: what its table entry (strategy_table.h) lists, what an
/// exploration passes to its factory, and how the factory reads them.
///
/// A strategy declares each parameter once, as a `StrategyParam` {name, type, default, help}.
/// The CLI turns every one into a `--<name>` option (sim/cli/strategy_options.cpp); the values
/// given travel as text in `StrategyArgs` (ExploreOptions::args); the factory reads them, typed,
/// through `StrategySetup`, which falls back on the declared default. Parameter names are unique
/// across the table, so a value names its parameter without naming its strategy.

#include <cstdint>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "model/scenario.h"

namespace amaxcheck::sched {

enum class ParamType : std::uint8_t {
  flag,             ///< on when given: "true" / "false"
  count,            ///< a whole number >= 0 (64 bits)
  integer,          ///< a whole number, maybe negative
  number,           ///< a real number
  choice,           ///< one of StrategyParam::choices
};

struct StrategyParam {
  const char* name;           ///< the option without its dashes: "depth", "max-schedules"
  ParamType type;
  const char* default_value;  ///< as text, in the type's form: "3", "-1", "ring", "false"
  const char* help;
  const char* choices = "";   ///< choice: the values, "|"-separated: "ring|tree"
  bool show_default = true;   ///< --help shows the default (off where the help says it)
};

/// The parameter values an exploration was given, as text by parameter name; a parameter not
/// given takes its declared default. Values are checked when read (or by check_strategy_args).
class StrategyArgs {
 public:
  void set(std::string_view name, std::string value) { given_[std::string(name)] = std::move(value); }
  /// Sets a value from a C++ value (a number, a bool, a string): `args.set("max-schedules", 60)`.
  template <class T>
    requires(!std::is_convertible_v<T, std::string>)
  void set(std::string_view name, const T& value) {
    set(name, fmt::format("{}", value));
  }
  /// The text given for `name`, or nullptr when none was.
  const std::string* find(std::string_view name) const;
  const std::map<std::string, std::string, std::less<>>& given() const { return given_; }

 private:
  std::map<std::string, std::string, std::less<>> given_;
};

/// Throws InputError "--<name>: expected ..., got ..." when `text` is not a value of `param`.
void check_param_value(const StrategyParam& param, std::string_view text);

/// The runs of a sampled exploration: run i < runs has its own seed mix_seed(seed, i), so each
/// is reproducible on its own and spreading runs over workers changes no run.
struct SampledRuns {
  std::uint64_t seed = 0;  ///< the exploration's seed
  std::uint64_t runs = 0;
  /// The seed of run `index`, or nothing past the last run.
  std::optional<std::uint64_t> run_seed(std::uint64_t index) const;
};

/// What a strategy's factory gets: the scenario, the exploration's seed and run count (its
/// sampled strategies' begin_run reads them), and its parameters' values.
class StrategySetup {
 public:
  StrategySetup(const Scenario& scenario, std::uint64_t seed, std::uint64_t runs,
                std::span<const StrategyParam> params, const StrategyArgs& args)
      : scenario(scenario), seed(seed), runs(runs), params_(params), args_(args) {}

  const Scenario& scenario;
  std::uint64_t seed;
  std::uint64_t runs;

  SampledRuns sampled() const { return SampledRuns{seed, runs}; }
  /// The value of parameter `name`, given or its default; the type must match the declared one
  /// (an internal error otherwise), and a malformed value is an InputError naming `--<name>`.
  bool flag(std::string_view name) const;
  std::uint64_t count(std::string_view name) const;
  std::int64_t integer(std::string_view name) const;
  double number(std::string_view name) const;
  std::string choice(std::string_view name) const;

 private:
  /// The given value or the default: both outlive the setup (no copy per read).
  std::string_view text(std::string_view name, ParamType type) const;

  std::span<const StrategyParam> params_;
  const StrategyArgs& args_;
};

}  // namespace amaxcheck::sched
