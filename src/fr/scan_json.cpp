#include "fr/scan_json.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <string_view>
#include <nlohmann/json.hpp>

namespace amaxcheck::fr {
namespace {

using Buffer = fmt::memory_buffer;

void text(Buffer& out, const std::string& value) {
  const std::string quoted = nlohmann::json(value).dump();
  out.append(quoted.data(), quoted.data() + quoted.size());
}
void put(Buffer& out, char c) { out.push_back(c); }
void put(Buffer& out, std::string_view s) { out.append(s.data(), s.data() + s.size()); }

template <typename T, typename F>
void array(Buffer& out, const std::vector<T>& items, F each) {
  put(out, '[');
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) put(out, ',');
    each(items[i]);
  }
  put(out, ']');
}

void record(Buffer& out, const Record& r) {
  fmt::format_to(std::back_inserter(out), "[{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", r.index, r.record_id, r.pg_name,
                 r.pg_desc, r.collective_seq_id, r.p2p_seq_id, r.op_id, r.profiling_name, r.input_sizes,
                 r.input_dtypes, r.output_sizes, r.output_dtypes, static_cast<int>(r.state), r.is_p2p ? 1 : 0,
                 r.time_created_ns);
  if (r.timeout_ms) fmt::format_to(std::back_inserter(out), "{},", *r.timeout_ms);
  else put(out, "null,");
  if (r.duration_ms && std::isfinite(*r.duration_ms)) fmt::format_to(std::back_inserter(out), "{},", *r.duration_ms);
  else put(out, "null,");
  fmt::format_to(std::back_inserter(out), "{},{}]", r.stack, r.frames_dropped);
}

void dump(Buffer& out, const Dump& d) {
  fmt::format_to(std::back_inserter(out), "{{\"input\":{},\"rank\":{},\"version\":", d.input, d.rank);
  text(out, d.version);
  put(out, ",\"pg_config\":");
  array(out, d.pg_config, [&](const ProcessGroup& g) {
    put(out, '[');
    text(out, g.key);
    put(out, ',');
    text(out, g.name);
    put(out, ',');
    text(out, g.desc);
    fmt::format_to(std::back_inserter(out), ",[{}]]", fmt::join(g.ranks, ","));
  });
  put(out, ",\"ignored_fields\":");
  array(out, d.ignored_fields, [&](const std::string& s) { text(out, s); });
  put(out, ",\"texts\":");
  array(out, d.texts, [&](const std::string& s) { text(out, s); });
  put(out, ",\"shapes\":");
  array(out, d.shapes, [&](const std::vector<Shape>& shapes) {
    array(out, shapes, [&](const Shape& s) { fmt::format_to(std::back_inserter(out), "[{}]", fmt::join(s, ",")); });
  });
  put(out, ",\"string_lists\":");
  array(out, d.string_lists, [&](const std::vector<TextId>& l) { fmt::format_to(std::back_inserter(out), "[{}]", fmt::join(l, ",")); });
  put(out, ",\"frames\":");
  array(out, d.frames, [&](const Frame& f) { fmt::format_to(std::back_inserter(out), "[{},{},{}]", f.name, f.filename, f.line); });
  put(out, ",\"stacks\":");
  array(out, d.stacks, [&](const std::vector<std::uint32_t>& s) { fmt::format_to(std::back_inserter(out), "[{}]", fmt::join(s, ",")); });
  put(out, ",\"records\":");
  array(out, d.records, [&](const Record& r) { record(out, r); });
  put(out, '}');
}

}  // namespace

std::string scan_json_line(const Dump& d) {
  Buffer out;
  dump(out, d);
  put(out, '\n');
  return fmt::to_string(out);
}

std::string scan_json(const std::vector<Dump>& dumps) {
  Buffer out;
  for (const Dump& d : dumps) {
    dump(out, d);
    put(out, '\n');
  }
  return fmt::to_string(out);
}

}  // namespace amaxcheck::fr
