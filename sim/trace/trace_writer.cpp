// Building traces from runs and writing them as JSON Lines.
#include <cmath>

#include "util/atomic_file.h"
#include "io/scenario_embed.h"
#include "io/scenario_hash.h"
#include "trace/trace.h"
#include "trace/version.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

using ojson = nlohmann::ordered_json;

ojson value_json(float v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";  // keep the sign: replay compares it
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return static_cast<double>(v);
}

ojson op_ref_json(const OpRef& op) { return ojson{{"rank", op.rank}, {"thread", op.thread}, {"index", op.index}}; }

ojson header_json(const TraceHeader& h) {
  ojson j;
  j["type"] = "header";
  j["format"] = trace_format_name;
  j["format_version"] = h.format_version;
  j["tool_version"] = h.tool_version;
  j["scenario_name"] = h.scenario_name;
  j["scenario_source"] = h.scenario_source;
  j["scenario_hash"] = h.scenario_hash;
  j["scenario"] = h.scenario ? ojson::parse(h.scenario->dump()) : ojson();
  j["strategy"] = h.strategy;
  j["seed"] = h.seed;
  j["run_index"] = h.run_index;
  j["parameters"] = h.parameters;
  j["engine"] = h.engine;
  return j;
}

ojson step_json(const TraceStep& s) {
  ojson j;
  j["type"] = "step";
  j["step"] = s.step;
  j["kind"] = to_string(s.action.kind);
  j["rank"] = s.action.rank;
  j["lane"] = s.action.lane;
  j["lane_name"] = s.lane;
  j["op"] = op_ref_json(s.op);
  j["op_name"] = s.op_name;
  if (s.collective) {
    j["comm"] = s.comm;
    j["seq"] = s.seq;
  }
  j["choice_kind"] = to_string(s.choice.kind);
  j["option_count"] = s.choice.option_count;
  j["chosen"] = s.choice.chosen;
  if (!s.written.empty()) {
    ojson written = ojson::array();
    for (const WrittenValues& w : s.written) {
      ojson values = ojson::array();
      for (float v : w.values) values.push_back(value_json(v));
      written.push_back(ojson{{"rank", w.rank},
                              {"buffer", w.range.buffer},
                              {"offset", w.range.offset},
                              {"count", w.range.count},
                              {"values", values}});
    }
    j["written"] = written;
  }
  if (s.timing) {
    j["start_us"] = s.timing->start_us;
    j["end_us"] = s.timing->end_us;
  }
  return j;
}

ojson hazard_json(const Hazard& h) {
  ojson j;
  j["type"] = "hazard";
  j["kind"] = to_string(h.kind);
  j["subject"] = h.subject;
  j["summary"] = h.summary;
  ojson participants = ojson::array();
  for (const Participant& p : h.participants) {
    participants.push_back(ojson{{"rank", p.rank},
                                 {"lane", p.lane},
                                 {"op", op_ref_json(p.op)},
                                 {"op_name", p.op_name},
                                 {"origin", p.origin},
                                 {"step", p.step}});
  }
  j["participants"] = participants;
  j["details"] = h.details;
  return j;
}

ojson summary_json(const TraceSummary& s) {
  ojson j;
  j["type"] = "summary";
  j["outcome"] = to_string(s.outcome);
  j["steps"] = s.steps;
  j["hazards"] = s.hazards;
  if (s.makespan_us) {
    j["makespan_us"] = *s.makespan_us;
    j["rank_end_us"] = s.rank_end_us;
  }
  return j;
}

}  // namespace

nlohmann::ordered_json engine_options_to_json(const EngineOptions& options) {
  ojson j;
  j["mutant"] = enum_name(options.mutant);
  j["record_values_up_to"] = options.record_values_up_to;
  return j;
}

EngineOptions engine_options_from_json(const nlohmann::json& json, const std::string& where) {
  EngineOptions options;
  if (!json.is_object()) throw InputError(where + ": field 'engine': expected an object");
  if (json.contains("record_values_up_to")) {
    const auto& v = json["record_values_up_to"];
    if (!v.is_number_unsigned()) throw InputError(where + ": field 'engine.record_values_up_to': expected an unsigned integer");
    options.record_values_up_to = v.get<std::size_t>();
  }
  if (json.contains("mutant")) {
    const auto& v = json["mutant"];
    const auto known = v.is_string() ? parse_enum<Mutant>(v.get<std::string>()) : std::nullopt;
    if (known) options.mutant = *known;
    if (!known) throw InputError(where + ": field 'engine.mutant': expected a known mutant name, got " + v.dump());
  }
  return options;
}

std::vector<Choice> Trace::choices() const {
  std::vector<Choice> out;
  out.reserve(steps.size());
  for (const TraceStep& s : steps) out.push_back(s.choice);
  return out;
}

std::vector<ExpectedStep> Trace::expected_steps() const {
  std::vector<ExpectedStep> out;
  out.reserve(steps.size());
  for (const TraceStep& s : steps) {
    out.push_back(ExpectedStep{s.action, s.op, s.op_name, s.collective, s.comm, s.seq, written_text(s.written)});
  }
  return out;
}

Trace make_trace(const Scenario& scenario, const RunResult& run, const TraceOrigin& origin,
                 const EngineOptions& engine, const TimedRun* timing) {
  AMAX_CHECK(run.steps.size() == run.step_count && run.choices.size() == run.step_count,
             "make_trace needs a run that recorded its steps");
  Trace trace;
  TraceHeader& h = trace.header;
  h.tool_version = tool_version_string;
  h.scenario_name = scenario.name;
  h.scenario_source = scenario.source;
  h.scenario_hash = scenario_hash(scenario);
  h.scenario = embed_scenario(scenario);
  h.strategy = origin.strategy;
  h.seed = origin.seed;
  h.run_index = origin.run_index;
  h.parameters = origin.parameters.is_object() ? origin.parameters : nlohmann::ordered_json::object();
  h.engine = engine_options_to_json(engine);
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    const Step& s = run.steps[i];
    TraceStep t{i, s.action, s.lane, s.op, s.op_name, s.collective, s.comm, s.seq, run.choices[i], s.written, std::nullopt};
    if (timing && i < timing->steps.size()) t.timing = timing->steps[i];
    trace.steps.push_back(std::move(t));
  }
  trace.hazards = run.hazards;
  trace.summary.outcome = run.outcome;
  trace.summary.steps = run.step_count;
  trace.summary.hazards = run.hazards.size();
  if (timing) {
    trace.summary.makespan_us = timing->makespan_us;
    trace.summary.rank_end_us = timing->rank_end_us;
  }
  return trace;
}

std::string trace_to_jsonl(const Trace& trace) {
  std::string out = header_json(trace.header).dump() + "\n";
  for (const TraceStep& s : trace.steps) out += step_json(s).dump() + "\n";
  for (const Hazard& h : trace.hazards) out += hazard_json(h).dump() + "\n";
  out += summary_json(trace.summary).dump() + "\n";
  return out;
}

void write_trace_file(const std::string& path, const Trace& trace) { write_file_atomically(path, trace_to_jsonl(trace)); }

}  // namespace amaxcheck::sched
