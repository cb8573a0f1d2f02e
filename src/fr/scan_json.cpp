#include "fr/scan_json.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>

namespace amaxcheck::fr {
namespace {

using Out = std::back_insert_iterator<std::string>;

void text(std::string& out, const std::string& value) { out += nlohmann::json(value).dump(); }

template <typename T, typename F>
void array(std::string& out, const std::vector<T>& items, F each) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    each(items[i]);
  }
  out += ']';
}

void record(std::string& out, const Record& r) {
  fmt::format_to(Out(out), "[{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", r.index, r.record_id, r.pg_name,
                 r.pg_desc, r.collective_seq_id, r.p2p_seq_id, r.op_id, r.profiling_name, r.input_sizes,
                 r.input_dtypes, r.output_sizes, r.output_dtypes, static_cast<int>(r.state), r.is_p2p ? 1 : 0,
                 r.time_created_ns);
  if (r.timeout_ms) fmt::format_to(Out(out), "{},", *r.timeout_ms);
  else out += "null,";
  if (r.duration_ms && std::isfinite(*r.duration_ms)) fmt::format_to(Out(out), "{},", *r.duration_ms);
  else out += "null,";
  fmt::format_to(Out(out), "{},{}]", r.stack, r.frames_dropped);
}

void dump(std::string& out, const Dump& d) {
  fmt::format_to(Out(out), "{{\"input\":{},\"rank\":{},\"version\":", d.input, d.rank);
  text(out, d.version);
  out += ",\"pg_config\":";
  array(out, d.pg_config, [&](const ProcessGroup& g) {
    out += '[';
    text(out, g.key);
    out += ',';
    text(out, g.name);
    out += ',';
    text(out, g.desc);
    fmt::format_to(Out(out), ",[{}]]", fmt::join(g.ranks, ","));
  });
  out += ",\"ignored_fields\":";
  array(out, d.ignored_fields, [&](const std::string& s) { text(out, s); });
  out += ",\"texts\":";
  array(out, d.texts, [&](const std::string& s) { text(out, s); });
  out += ",\"shapes\":";
  array(out, d.shapes, [&](const std::vector<Shape>& shapes) {
    array(out, shapes, [&](const Shape& s) { fmt::format_to(Out(out), "[{}]", fmt::join(s, ",")); });
  });
  out += ",\"string_lists\":";
  array(out, d.string_lists, [&](const std::vector<TextId>& l) { fmt::format_to(Out(out), "[{}]", fmt::join(l, ",")); });
  out += ",\"frames\":";
  array(out, d.frames, [&](const Frame& f) { fmt::format_to(Out(out), "[{},{},{}]", f.name, f.filename, f.line); });
  out += ",\"stacks\":";
  array(out, d.stacks, [&](const std::vector<std::uint32_t>& s) { fmt::format_to(Out(out), "[{}]", fmt::join(s, ",")); });
  out += ",\"records\":";
  array(out, d.records, [&](const Record& r) { record(out, r); });
  out += '}';
}

}  // namespace

std::string scan_json(const std::vector<Dump>& dumps) {
  std::string out;
  for (const Dump& d : dumps) {
    dump(out, d);
    out += '\n';
  }
  return out;
}

}  // namespace amaxcheck::fr
