// Reading and validating trace files. Every error names the file, the line and the field.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "io/json_text.h"
#include "util/atomic_file.h"
#include "trace/trace.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck::sched {
namespace {

using json = nlohmann::json;

/// One line of a trace being read, for error messages.
class Line {
 public:
  Line(const std::string& where, std::size_t number, const json& doc) : where_(where), number_(number), doc_(doc) {}

  [[noreturn]] void fail(const std::string& field, const std::string& expected, const json* got = nullptr) const {
    throw InputError(fmt::format("{}:{}: field '{}': expected {}{}", where_, number_, field, expected,
                                 got ? ", got " + got->dump() : std::string(", but it is missing")));
  }
  [[noreturn]] void fail_line(const std::string& what) const {
    throw InputError(fmt::format("{}:{}: {}", where_, number_, what));
  }
  const json& at(const json& obj, const std::string& key, const std::string& path) const {
    if (!obj.is_object() || !obj.contains(key)) fail(path, "a value");
    return obj[key];
  }
  std::uint64_t u64(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = at(obj, key, path);
    if (!v.is_number_unsigned()) fail(path, "an unsigned integer", &v);
    return v.get<std::uint64_t>();
  }
  std::uint32_t u32(const json& obj, const std::string& key, const std::string& path) const {
    const std::uint64_t v = u64(obj, key, path);
    if (v > std::numeric_limits<std::uint32_t>::max()) fail(path, "a 32-bit unsigned integer", &obj[key]);
    return static_cast<std::uint32_t>(v);
  }
  std::string str(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = at(obj, key, path);
    if (!v.is_string()) fail(path, "a string", &v);
    return v.get<std::string>();
  }
  bool boolean(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = at(obj, key, path);
    if (!v.is_boolean()) fail(path, "true or false", &v);
    return v.get<bool>();
  }
  double number(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = at(obj, key, path);
    if (!v.is_number()) fail(path, "a number", &v);
    return v.get<double>();
  }
  const json& array(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = at(obj, key, path);
    if (!v.is_array()) fail(path, "an array", &v);
    return v;
  }
  float value(const json& v, const std::string& path) const {
    if (v.is_number()) {
      const double number = v.get<double>();
      if (std::fabs(number) > std::numeric_limits<float>::max()) fail(path, "a number within float range", &v);
      return static_cast<float>(number);
    }
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "nan") return std::numeric_limits<float>::quiet_NaN();
      if (s == "-nan") return -std::numeric_limits<float>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<float>::infinity();
      if (s == "-inf") return -std::numeric_limits<float>::infinity();
    }
    fail(path, "a number or \"nan\", \"-nan\", \"inf\", \"-inf\"", &v);
  }
  OpRef op_ref(const json& obj, const std::string& key, const std::string& path) const {
    const json& o = at(obj, key, path);
    if (!o.is_object()) fail(path, "an object {rank, thread, index}", &o);
    return OpRef{u32(o, "rank", path + ".rank"), u32(o, "thread", path + ".thread"), u32(o, "index", path + ".index")};
  }
  const json& doc() const { return doc_; }
  std::size_t number() const { return number_; }

 private:
  const std::string& where_;
  std::size_t number_;
  const json& doc_;
};

TraceHeader read_header(const Line& line, std::string_view raw) {
  const json& d = line.doc();
  TraceHeader h;
  if (line.str(d, "format", "format") != trace_format_name) line.fail("format", fmt::format("\"{}\"", trace_format_name), &d["format"]);
  const std::uint64_t version = line.u64(d, "format_version", "format_version");
  if (version != static_cast<std::uint64_t>(trace_format_version)) {
    line.fail("format_version", fmt::format("{} (this build reads version {})", trace_format_version, trace_format_version),
              &d["format_version"]);
  }
  h.format_version = static_cast<int>(version);
  h.tool_version = line.str(d, "tool_version", "tool_version");
  h.scenario_name = line.str(d, "scenario_name", "scenario_name");
  h.scenario_source = line.str(d, "scenario_source", "scenario_source");
  h.scenario_hash = line.str(d, "scenario_hash", "scenario_hash");
  const json& scenario = line.at(d, "scenario", "scenario");
  if (!scenario.is_null()) {
    if (!scenario.is_object()) line.fail("scenario", "an object or null", &scenario);
    h.scenario = scenario;
  }
  h.strategy = line.str(d, "strategy", "strategy");
  h.seed = line.u64(d, "seed", "seed");
  h.run_index = line.u64(d, "run_index", "run_index");
  const json& parameters = line.at(d, "parameters", "parameters");
  if (!parameters.is_object()) line.fail("parameters", "an object", &parameters);
  // Parameters keep the order the strategy wrote them in, so a re-written trace is identical.
  const auto ordered = nlohmann::ordered_json::parse(raw);
  h.parameters = ordered["parameters"];
  const json& engine = line.at(d, "engine", "engine");
  if (!engine.is_object()) line.fail("engine", "an object", &engine);
  h.engine = ordered["engine"];
  return h;
}

ActionKind action_kind(const Line& line, const json& d) {
  const std::string kind = line.str(d, "kind", "kind");
  if (auto k = parse_enum<ActionKind>(kind)) return *k;
  line.fail("kind", "one of issue, execute, join, complete", &d["kind"]);
}

TraceStep read_step(const Line& line, std::size_t expected_index) {
  const json& d = line.doc();
  TraceStep s;
  s.step = line.u64(d, "step", "step");
  if (s.step != expected_index) line.fail("step", fmt::format("{} (steps are numbered in order)", expected_index), &d["step"]);
  s.action.kind = action_kind(line, d);
  s.action.rank = line.u32(d, "rank", "rank");
  s.action.lane = line.u32(d, "lane", "lane");
  s.lane = line.str(d, "lane_name", "lane_name");
  s.op = line.op_ref(d, "op", "op");
  s.op_name = line.str(d, "op_name", "op_name");
  s.collective = d.contains("comm") || d.contains("seq");
  if (s.collective) {
    s.comm = line.u32(d, "comm", "comm");
    s.seq = line.u64(d, "seq", "seq");
  }
  if (!parse_choice_kind(line.str(d, "choice_kind", "choice_kind"), s.choice.kind)) {
    line.fail("choice_kind", "next_action", &d["choice_kind"]);
  }
  s.choice.option_count = line.u64(d, "option_count", "option_count");
  s.choice.chosen = line.u64(d, "chosen", "chosen");
  if (s.choice.option_count == 0) line.fail("option_count", "at least 1", &d["option_count"]);
  if (s.choice.chosen >= s.choice.option_count) {
    line.fail("chosen", fmt::format("an index below option_count ({})", s.choice.option_count), &d["chosen"]);
  }
  if (d.contains("written")) {
    const json& written = line.array(d, "written", "written");
    for (std::size_t i = 0; i < written.size(); ++i) {
      const std::string path = fmt::format("written[{}]", i);
      const json& w = written[i];
      WrittenValues values;
      values.rank = line.u32(w, "rank", path + ".rank");
      values.range = Range{line.u32(w, "buffer", path + ".buffer"), line.u32(w, "offset", path + ".offset"),
                           line.u32(w, "count", path + ".count")};
      const json& list = line.array(w, "values", path + ".values");
      if (list.size() != values.range.count) line.fail(path + ".values", fmt::format("{} values", values.range.count), &list);
      for (std::size_t k = 0; k < list.size(); ++k) values.values.push_back(line.value(list[k], fmt::format("{}.values[{}]", path, k)));
      s.written.push_back(std::move(values));
    }
  }
  if (d.contains("start_us") || d.contains("end_us")) {
    s.timing = StepTiming{line.number(d, "start_us", "start_us"), line.number(d, "end_us", "end_us")};
  }
  return s;
}

Hazard read_hazard(const Line& line) {
  const json& d = line.doc();
  Hazard h;
  const std::string kind = line.str(d, "kind", "kind");
  const auto known = parse_hazard_kind(kind);
  if (!known) line.fail("kind", "a hazard kind (data_race, deadlock, ...)", &d["kind"]);
  h.kind = *known;
  if (d.contains("subject")) h.subject = line.str(d, "subject", "subject");  // absent in older traces
  h.summary = line.str(d, "summary", "summary");
  const json& participants = line.array(d, "participants", "participants");
  for (std::size_t i = 0; i < participants.size(); ++i) {
    const std::string path = fmt::format("participants[{}]", i);
    const json& p = participants[i];
    h.participants.push_back(Participant{line.u32(p, "rank", path + ".rank"), line.str(p, "lane", path + ".lane"),
                                         line.op_ref(p, "op", path + ".op"), line.str(p, "op_name", path + ".op_name"),
                                         line.str(p, "origin", path + ".origin"), line.u64(p, "step", path + ".step")});
  }
  const json& details = line.array(d, "details", "details");
  for (std::size_t i = 0; i < details.size(); ++i) {
    if (!details[i].is_string()) line.fail(fmt::format("details[{}]", i), "a string", &details[i]);
    h.details.push_back(details[i].get<std::string>());
  }
  return h;
}

TraceSummary read_summary(const Line& line) {
  const json& d = line.doc();
  TraceSummary s;
  if (!parse_run_outcome(line.str(d, "outcome", "outcome"), s.outcome)) {
    line.fail("outcome", "finished, stuck, stopped or step_limit", &d["outcome"]);
  }
  s.steps = line.u64(d, "steps", "steps");
  s.hazards = line.u64(d, "hazards", "hazards");
  if (d.contains("makespan_us")) {
    s.makespan_us = line.number(d, "makespan_us", "makespan_us");
    const json& ends = line.array(d, "rank_end_us", "rank_end_us");
    for (std::size_t i = 0; i < ends.size(); ++i) {
      if (!ends[i].is_number()) line.fail(fmt::format("rank_end_us[{}]", i), "a number", &ends[i]);
      s.rank_end_us.push_back(ends[i].get<double>());
    }
  }
  return s;
}

enum class Part { header, steps, hazards, done };

/// One non-blank line: a header, step, hazard or summary line, in that order.
void read_line(Trace& trace, Part& part, const Line& line, std::string_view raw) {
  const json& doc = line.doc();
  if (!doc.is_object()) line.fail_line("expected a JSON object");
  const std::string type = line.str(doc, "type", "type");
  if (part == Part::done) line.fail_line("nothing may follow the summary line");
  if (part == Part::header) {
    if (type != "header") line.fail("type", "\"header\" on the first line", &doc["type"]);
    trace.header = read_header(line, raw);
    part = Part::steps;
  } else if (type == "step") {
    if (part != Part::steps) line.fail_line("a step line after the hazard lines");
    trace.steps.push_back(read_step(line, trace.steps.size()));
    trace.steps.back().line = line.number();
  } else if (type == "hazard") {
    part = Part::hazards;
    trace.hazards.push_back(read_hazard(line));
  } else if (type == "summary") {
    trace.summary = read_summary(line);
    trace.summary.line = line.number();
    if (trace.summary.steps != trace.steps.size()) {
      line.fail("steps", fmt::format("{} (the number of step lines)", trace.steps.size()), &doc["steps"]);
    }
    if (trace.summary.hazards != trace.hazards.size()) {
      line.fail("hazards", fmt::format("{} (the number of hazard lines)", trace.hazards.size()), &doc["hazards"]);
    }
    part = Part::done;
  } else {
    line.fail("type", "one of header, step, hazard, summary", &doc["type"]);
  }
}

}  // namespace

Trace parse_trace(std::string_view text, const std::string& where) {
  Trace trace;
  Part part = Part::header;
  std::size_t number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (raw.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const json doc = parse_json_text(raw, where, number);
    const Line line(where, number, doc);
    // Anything the reader did not foresee (a library exception) is still this line's fault.
    try {
      read_line(trace, part, line, raw);
    } catch (const InputError&) {
      throw;
    } catch (const InternalError&) {
      throw;
    } catch (const std::exception& e) {
      line.fail_line(fmt::format("cannot read this line: {}", e.what()));
    }
  }
  if (part == Part::header) throw InputError(where + ": empty trace (expected a header line)");
  if (part != Part::done) throw InputError(fmt::format("{}:{}: the trace ends without a summary line (truncated?)", where, number));
  return trace;
}

Trace read_trace_file(const std::string& path) {
  return parse_trace(read_file(path), escape_invalid_utf8(path));  // a path need not be UTF-8
}

}  // namespace amaxcheck::sched
