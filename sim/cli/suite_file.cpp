// Suite files: JSON -> Suite. Every field is read with its path (JsonField), every scenario is
// built here, so a bad suite fails before anything runs.
#include "cli/suite_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "cli/check_runner.h"
#include "io/json_field.h"
#include "io/json_file.h"
#include "io/scenario_json.h"
#include "io/toml_file.h"
#include "scheduler/strategy_table.h"
#include "util/check.h"
#include "util/shell_word.h"

namespace amaxcheck::cli {
namespace {

const char* verdict_word(Expectation::Verdict v) {
  switch (v) {
    case Expectation::Verdict::proven_clean: return "proven_clean";
    case Expectation::Verdict::no_hazard_found: return "no_hazard_found";
    case Expectation::Verdict::hazard: return "hazard";
  }
  return "?";
}

Expectation read_expectation(const JsonField& field) {
  field.allow_only({"verdict", "kinds", "subject", "ops", "comment"});
  Expectation e;
  const JsonField verdict = field.at("verdict");
  const std::string word = verdict.as_string();
  if (word == "proven_clean") e.verdict = Expectation::Verdict::proven_clean;
  else if (word == "no_hazard_found") e.verdict = Expectation::Verdict::no_hazard_found;
  else if (word == "hazard") e.verdict = Expectation::Verdict::hazard;
  else verdict.fail_choice("proven_clean|no_hazard_found|hazard");
  const bool hazard = e.verdict == Expectation::Verdict::hazard;
  if (auto kinds = field.find("kinds")) {
    for (const JsonField& kind : kinds->items()) e.kinds.insert(kind.as_enum<HazardKind>());
  }
  if (auto subject = field.find("subject")) e.subject = subject->as_string();
  if (auto ops = field.find("ops")) {
    for (const JsonField& op : ops->items()) e.ops.push_back(op.as_string());
  }
  if (!hazard && (!e.kinds.empty() || !e.subject.empty() || !e.ops.empty())) {
    field.fail("kinds, subject and ops describe an expected hazard; they need \"verdict\": \"hazard\"");
  }
  if (hazard && e.kinds.empty()) field.at("kinds").fail("expected at least one hazard kind");
  return e;
}

sched::ExploreOptions read_explore(const JsonField& c) {
  sched::ExploreOptions o;
  o.runs = 200;  // as `check`
  if (auto s = c.find("strategy")) {
    if (sched::find_strategy(s->as_string()) == nullptr) s->fail_choice(sched::strategy_choices());
    o.strategy = s->as_string();
  }
  if (auto f = c.find("seed")) o.seed = f->as_uint64();
  if (auto f = c.find("runs")) {
    o.runs = f->as_uint64();
    if (o.runs == 0) f->fail("expected at least 1 run");  // zero runs show nothing, as in `check`
  }
  if (auto f = c.find("depth")) {
    if (f->as_uint() == 0) f->fail("expected a PCT depth of at least 1");
    o.args.set("depth", f->as_uint());
  }
  if (auto f = c.find("keep_going")) o.stop_at_first = !f->as_bool();
  if (auto f = c.find("max_schedules")) o.args.set("max-schedules", f->as_uint64());
  if (auto f = c.find("preemption_bound")) o.args.set("preemption-bound", f->as_uint());
  if (auto f = c.find("max_steps")) o.run.max_steps = f->as_uint64();
  if (auto f = c.find("time_budget_s")) {
    if (!(f->as_double() > 0)) f->fail("expected seconds > 0");
    o.time_budget_s = f->as_double();
  }
  return o;
}

/// The options of `check` that give the same exploration.
std::string explore_args(const sched::ExploreOptions& o) {
  std::string args = fmt::format(" --strategy {} --seed {}", o.strategy, o.seed);
  const sched::StrategyEntry& entry = sched::strategy_entry(o.strategy);
  if (entry.coverage == sched::Coverage::sampled) args += fmt::format(" --runs {}", o.runs);
  // The strategy's own parameters that the case gives (the others take their defaults).
  for (const sched::StrategyParam& param : entry.params) {
    const std::string* given = o.args.find(param.name);
    if (given == nullptr) continue;
    if (param.type != sched::ParamType::flag) args += fmt::format(" --{} {}", param.name, *given);
    else if (*given == "true") args += fmt::format(" --{}", param.name);
  }
  if (!o.stop_at_first) args += " --keep-going";
  if (o.run.max_steps > 0) args += fmt::format(" --max-steps {}", o.run.max_steps);
  if (o.time_budget_s) args += fmt::format(" --time-budget {:g}", *o.time_budget_s);
  return args;
}

/// The fields of a case (and of `defaults`, less name and scenario_file).
void allow_case_fields(const JsonField& c) {
  c.allow_only({"name", "why", "scenario", "scenario_file", "strategy", "seed", "runs", "depth", "keep_going",
                "max_schedules", "preemption_bound", "max_steps", "time_budget_s", "expect", "comment"});
}

/// What a suite needs of the memory limit: the limit, and how many cases run at once.
struct CaseMemory {
  const MemoryLimit& limit;
  unsigned jobs;
};

SuiteCase read_case(const JsonField& c, const std::string& where, const std::string& base_dir,
                    const CaseMemory& memory) {
  allow_case_fields(c);
  SuiteCase out;
  out.name = c.at("name").as_string();
  if (out.name.empty()) c.at("name").fail("expected a non-empty name");
  if (auto why = c.find("why")) out.why = why->as_string();
  out.explore = read_explore(c);
  out.expect = read_expectation(c.at("expect"));
  if (out.expect.verdict == Expectation::Verdict::proven_clean &&
      sched::strategy_entry(out.explore.strategy).coverage != sched::Coverage::exhaustive) {
    c.at("expect").fail(fmt::format("only an exhaustive search proves a design clean; strategy {} samples "
                                    "(expect \"no_hazard_found\", or use \"strategy\": \"exhaustive\")",
                                    out.explore.strategy));
  }
  const std::string check = "amaxcheck check ";
  const std::string named = fmt::format("{}: case \"{}\" ({})", where, out.name, c.path());
  // The reader names the file or field it reads; the message names the case.
  const BeforeBuild refuse_large = [&](const ScenarioSize& size, const std::string& what) {
    memory.limit.check_size(size, fmt::format("the {} of case \"{}\"", what, out.name), memory.jobs);
  };
  if (auto file = c.find("scenario_file")) {
    const std::string path = (std::filesystem::path(base_dir) / file->as_string()).lexically_normal().string();
    std::error_code error;
    if (!std::filesystem::exists(path, error)) {
      file->fail(error ? fmt::format("cannot look at the scenario file {}: {}", path, error.message())
                       : fmt::format("no such scenario file: {}", path));
    }
    out.scenario = load_scenario_file(path, refuse_large);
    out.rerun = check + shell_word(path);
  } else {
    const JsonField scenario = c.at("scenario");
    if (!scenario.json().contains("protocol")) {
      scenario.fail("expected a protocol and its knobs ({\"protocol\": \"te-async\", \"knobs\": {...}}); an explicit "
                    "scenario goes in a file named by \"scenario_file\"");
    }
    out.scenario = scenario_from_json(scenario.json(), fmt::format("{}: {}", where, scenario.path()), refuse_large);
    out.rerun = out.scenario.source;
  }
  memory.limit.check_scenario(out.scenario, named, memory.jobs);
  out.rerun += explore_args(out.explore);
  return out;
}

}  // namespace

std::string describe(const Expectation& expect) {
  switch (expect.verdict) {
    case Expectation::Verdict::proven_clean: return "proven clean";
    case Expectation::Verdict::no_hazard_found: return "no hazard found";
    case Expectation::Verdict::hazard: break;
  }
  std::string kinds;
  for (HazardKind kind : expect.kinds) kinds += (kinds.empty() ? "" : ", ") + std::string(to_string(kind));
  std::string text = "HAZARD " + kinds;
  if (!expect.subject.empty()) text += " on " + expect.subject;
  return text;
}

nlohmann::ordered_json expectation_json(const Expectation& expect) {
  nlohmann::ordered_json j;
  j["verdict"] = verdict_word(expect.verdict);
  if (expect.verdict != Expectation::Verdict::hazard) return j;
  j["kinds"] = nlohmann::ordered_json::array();
  for (HazardKind kind : expect.kinds) j["kinds"].push_back(to_string(kind));
  if (!expect.subject.empty()) j["subject"] = expect.subject;
  if (!expect.ops.empty()) j["ops"] = expect.ops;
  return j;
}

Suite suite_from_json(const nlohmann::json& doc, const std::string& where, const std::string& base_dir,
                      const MemoryLimit& memory, unsigned jobs) {
  const JsonField root(doc, "", where);
  root.allow_only({"suite", "description", "defaults", "cases", "comment"});
  Suite suite;
  suite.where = where;
  suite.name = root.at("suite").as_string();
  if (auto d = root.find("description")) suite.description = d->as_string();
  nlohmann::json defaults = nlohmann::json::object();
  if (auto d = root.find("defaults")) {
    d->expect_object();
    allow_case_fields(*d);  // so a typo in defaults is named there, not in every case
    if (d->json().contains("name") || d->json().contains("scenario_file")) {
      d->fail("defaults may not set a case's name or scenario_file");
    }
    defaults = d->json();
  }
  const JsonField cases = root.at("cases");
  if (cases.items().empty()) cases.fail("expected at least one case");
  std::map<std::string, std::string> files;  // a case's file name -> its case, so no two collide
  // Cases run `jobs` at a time, never more than there are.
  const CaseMemory memory_at_once{memory, static_cast<unsigned>(std::min<std::size_t>(std::max(1u, jobs), cases.items().size()))};
  for (const JsonField& given : cases.items()) {
    given.expect_object();
    if (given.json().contains("scenario") && given.json().contains("scenario_file")) {
      given.fail("a case has either \"scenario\" or \"scenario_file\", not both");
    }
    nlohmann::json merged = defaults;
    if (given.json().contains("scenario_file")) merged.erase("scenario");
    merged.merge_patch(given.json());
    const JsonField c(merged, given.path(), where);
    SuiteCase one = read_case(c, where, base_dir, memory_at_once);
    const auto [it, fresh] = files.emplace(slug(one.name), one.name);
    if (!fresh) c.at("name").fail(fmt::format("\"{}\" has the same file name as case \"{}\"", one.name, it->second));
    suite.cases.push_back(std::move(one));
  }
  return suite;
}

Suite load_suite_file(const std::string& path, const MemoryLimit& memory, unsigned jobs) {
  const std::string base = std::filesystem::path(path).parent_path().string();
  const bool toml = std::filesystem::path(path).extension() == ".toml";
  return suite_from_json(toml ? read_toml_file(path, "suite file") : read_json_file(path, "suite file"), path, base,
                         memory, jobs);
}

}  // namespace amaxcheck::cli
