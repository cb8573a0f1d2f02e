#include "failure_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>

#include "io/scenario_json.h"
#include "scheduler/replay_strategy.h"
#include "trace/reproduce.h"
#include "io/scenario_hash.h"

namespace amaxcheck {

void showValue(const Scenario& scenario, std::ostream& os) { os << scenario_to_text(scenario); }

void showValue(const ScaleUpdateParams& p, std::ostream& os) {
  os << fmt::format("tensors {} history_len {} algo {} margin {} format {}", p.tensors, p.history_len,
                    p.algo == HistoryAlgo::max ? "max" : "most_recent", p.margin, p.format == Fp8Format::e4m3 ? "e4m3" : "e5m2");
}

}  // namespace amaxcheck

namespace amaxcheck::props {
namespace {

/// The files' path without extension. While RapidCheck shrinks, every failing candidate writes
/// its files and the last one is the minimal counterexample; the previous candidate's files of
/// the same property are removed so the folder keeps one counterexample per property.
std::string stem_for(const std::string& property, const Scenario& scenario) {
  static std::map<std::string, std::string> last_stem;  // property -> stem (tests run on one thread)
  std::string hash = scenario_hash(scenario);  // "fnv1a64:0123abcd..."
  hash = hash.substr(hash.find(':') + 1);
  const std::string stem = fmt::format("{}/{}-{}", failure_folder(), property, hash);
  auto [it, fresh] = last_stem.try_emplace(property, stem);
  if (!fresh && it->second != stem) {
    std::error_code ignored;
    for (const char* ext : {".scenario.json", ".trace.jsonl"}) std::filesystem::remove(it->second + ext, ignored);
    it->second = stem;
  }
  return stem;
}

}  // namespace

std::string failure_folder() {
  const char* env = std::getenv("AMAXCHECK_PROPERTY_OUT");
  const std::filesystem::path folder =
      env && *env ? std::filesystem::path(env) : std::filesystem::temp_directory_path() / "amaxcheck-properties";
  std::filesystem::create_directories(folder);
  return folder.string();
}

std::string failure_report(const std::string& property, const ObservedRun& run, const std::string& rebuild) {
  const std::string stem = stem_for(property, run.scenario);
  const std::string scenario_file = stem + ".scenario.json";
  const std::string trace_file = stem + ".trace.jsonl";
  std::string text = "\ncounterexample:\n";
  if (!rebuild.empty()) text += "  rebuild:  " + rebuild + "\n";
  try {
    save_scenario_file(run.scenario, scenario_file);
    text += fmt::format("  scenario: amaxcheck check {} {}\n", scenario_file, schedule_args(run.schedule));
    sched::ExploreOptions options;
    options.strategy = run.schedule.strategy;
    options.seed = run.schedule.seed;
    options.args.set("depth", run.schedule.depth);
    options.run.engine = run.engine;
    const sched::FailingRun failing{0, sched::run_seed(run.schedule.seed, 0), run.strategy_name,
                                    run.strategy_parameters, run.run};
    sched::write_trace_file(trace_file, sched::failure_trace(run.scenario, options, failing));
    text += "  replay:   " + sched::replay_command(trace_file) + "\n";
  } catch (const std::exception& e) {
    text += fmt::format("  (could not write the counterexample files: {})\n", e.what());
  }
  if (run.engine.mutant != Mutant::none) text += "  (run with a planted engine mutant; the trace header names it)\n";
  text += "hazards:\n" + run.describe_hazards();
  return text;
}

std::string action_failure_report(const std::string& property, const Scenario& scenario,
                                  const std::vector<Action>& actions, const EngineOptions& engine) {
  const std::string stem = stem_for(property, scenario);
  const std::string scenario_file = stem + ".scenario.json";
  const std::string trace_file = stem + ".trace.jsonl";
  std::string text = "\ncounterexample:\n";
  try {
    save_scenario_file(scenario, scenario_file);
    text += "  scenario: " + scenario_file + "\n";
    // The choices that take these actions, as long as the engine enables them.
    std::vector<sched::Choice> choices;
    {
      Engine probe(scenario, engine);
      for (const Action& a : actions) {
        const auto& en = probe.enabled();
        auto it = std::find(en.begin(), en.end(), a);
        if (it == en.end()) break;
        choices.push_back({sched::ChoiceKind::next_action, en.size(), static_cast<std::size_t>(it - en.begin())});
        probe.apply(a);
      }
    }
    sched::ReplayStrategy replay(choices, sched::ReplayStrategy::Mode::lenient);
    sched::RunOptions options;
    options.engine = engine;
    options.record_steps = true;
    const sched::RunResult run = sched::run_once(scenario, replay, options);
    sched::TraceOrigin origin{replay.name(), 0, 0, replay.parameters()};
    sched::write_trace_file(trace_file, sched::make_trace(scenario, run, origin, engine));
    text += fmt::format("  trace:    the {} actions above, then the first enabled action to the end\n", choices.size());
    text += "  replay:   " + sched::replay_command(trace_file) + "\n";
  } catch (const std::exception& e) {
    text += fmt::format("  (could not write the counterexample files: {})\n", e.what());
  }
  if (engine.mutant != Mutant::none) text += "  (run with a planted engine mutant; the trace header names it)\n";
  return text;
}

}  // namespace amaxcheck::props
