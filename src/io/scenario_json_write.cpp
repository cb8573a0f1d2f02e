// Scenario -> JSON, always the full explicit form. Lossless: every field that is relevant to
// an op's kind, or differs from its default, is written, so scenario_from_json gives back
// the same Scenario. References use names when they are unique, indices otherwise.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "io/json_field.h"
#include "io/scenario_json.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

using nlohmann::json;

/// A name when it identifies index `i` unambiguously in `names`, else the index.
json ref(const std::vector<std::string>& names, std::uint32_t i) {
  if (i >= names.size() || names[i].empty()) return i;
  for (std::size_t j = 0; j < names.size(); ++j) {
    if (j != i && names[j] == names[i]) return i;
  }
  return names[i];
}

template <typename Named>
std::vector<std::string> names_of(const std::vector<Named>& items) {
  std::vector<std::string> names;
  for (const auto& item : items) names.push_back(item.name);
  return names;
}

json floats(const std::vector<float>& values) {
  json array = json::array();
  for (float v : values) array.push_back(float_to_json(v));
  return array;
}

json range_json(const std::vector<std::string>& buffers, const Range& range) {
  return json{{"buffer", ref(buffers, range.buffer)}, {"offset", range.offset}, {"count", range.count}};
}

json op_json(const Scenario& s, const Rank& rank, const Op& op, bool cost_sizes) {
  const auto buffers = names_of(rank.buffers);
  json j;
  j["kind"] = to_string(op.kind);
  if (!op.name.empty()) j["name"] = op.name;
  if (!op.origin.empty()) j["origin"] = op.origin;
  // A field the kind uses (model/op_kind.h) is always written, any other when it differs from
  // its default, so reading the file back gives the same Op.
  const auto uses = [&](OpField f) { return has_field(op.kind, f); };
  if (uses(field_stream) || op.stream != 0) j["stream"] = ref(names_of(rank.streams), op.stream);
  if (uses(field_event) || op.event != 0) j["event"] = ref(names_of(rank.events), op.event);
  const bool collective = is_collective(op.kind);
  if (uses(field_comm) || op.comm != 0) j["comm"] = ref(names_of(s.comms), op.comm);
  // Every collective carries its reduction (not only the kinds whose reduce op matters).
  if (collective || op.reduce != ReduceOp::max) j["reduce"] = enum_name(op.reduce);
  if (op.dtype != Dtype::f32) j["dtype"] = enum_name(op.dtype);
  if (uses(field_root) || op.root != 0) j["root"] = op.root;
  if (uses(field_peer) || op.peer != 0) j["peer"] = op.peer;
  if (op.group != 0) j["group"] = op.group;
  if (uses(field_format) || op.format != Fp8Format::e4m3) j["format"] = enum_name(op.format);
  const ScaleUpdateParams defaults;
  if (uses(field_scale) || op.scale.tensors != defaults.tensors ||
      op.scale.history_len != defaults.history_len || op.scale.algo != defaults.algo ||
      op.scale.margin != defaults.margin || op.scale.format != defaults.format) {
    j["scale"] = json{{"tensors", op.scale.tensors},
                      {"history_len", op.scale.history_len},
                      {"algo", enum_name(op.scale.algo)},
                      {"margin", op.scale.margin},
                      {"format", enum_name(op.scale.format)}};
  }
  if (!op.reads.empty()) {
    j["reads"] = json::array();
    for (const Range& r : op.reads) j["reads"].push_back(range_json(buffers, r));
  }
  if (!op.writes.empty()) {
    j["writes"] = json::array();
    for (const Range& r : op.writes) j["writes"].push_back(range_json(buffers, r));
  }
  if (uses(field_values) || !op.values.empty()) j["values"] = floats(op.values);
  if (uses(field_flag) || op.flag != 0) j["flag"] = ref(rank.flags, op.flag);
  if (uses(field_count) || op.count != 0) j["count"] = op.count;
  if (op.cost_us != 0) j["cost_us"] = op.cost_us;
  if (cost_sizes && op.cost_bytes != 0) j["cost_bytes"] = op.cost_bytes;
  if (cost_sizes && op.cost_flops != 0) j["cost_flops"] = op.cost_flops;
  return j;
}

json rank_json(const Scenario& s, const Rank& rank, bool cost_sizes) {
  json j;
  j["name"] = rank.name;
  j["device"] = rank.device;
  j["streams"] = names_of(rank.streams);
  j["events"] = names_of(rank.events);
  j["flags"] = rank.flags;
  j["buffers"] = json::array();
  for (const Buffer& b : rank.buffers) {
    json buffer{{"name", b.name}, {"size", b.size}};
    if (b.host) buffer["host"] = true;
    if (!b.init.empty()) buffer["init"] = floats(b.init);
    j["buffers"].push_back(std::move(buffer));
  }
  j["threads"] = json::array();
  for (const Thread& t : rank.threads) {
    json program = json::array();
    for (const Op& op : t.program) program.push_back(op_json(s, rank, op, cost_sizes));
    j["threads"].push_back(json{{"name", t.name}, {"program", std::move(program)}});
  }
  return j;
}

/// Pretty-prints with small values on one line: an op or a range reads as one line.
void pretty(const json& v, std::string& out, int indent) {
  const std::string flat = v.dump();
  if (flat.size() <= 110 || !v.is_structured() || v.empty()) {
    out += flat;
    return;
  }
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  out += v.is_object() ? "{\n" : "[\n";
  bool first = true;
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      out += (first ? "" : ",\n") + pad + json(it.key()).dump() + ": ";
      pretty(it.value(), out, indent + 2);
      first = false;
    }
  } else {
    for (const json& item : v) {
      out += (first ? "" : ",\n") + pad;
      pretty(item, out, indent + 2);
      first = false;
    }
  }
  out += "\n" + std::string(static_cast<std::size_t>(indent), ' ') + (v.is_object() ? "}" : "]");
}

}  // namespace

json scenario_to_json(const Scenario& s, bool cost_sizes) {
  json j;
  j["name"] = s.name;
  j["source"] = s.source;
  j["kernels"] = enum_name(s.kernels);
  j["comms"] = json::array();
  for (const Communicator& c : s.comms) j["comms"].push_back(json{{"name", c.name}, {"members", c.members}});
  j["ranks"] = json::array();
  for (const Rank& rank : s.ranks) j["ranks"].push_back(rank_json(s, rank, cost_sizes));
  j["checks"] = json::array();
  for (const ReplicaCheck& check : s.checks) {
    json replicas = json::array();
    for (const auto& r : check.replicas) {
      const auto buffers = r.rank < s.ranks.size() ? names_of(s.ranks[r.rank].buffers) : std::vector<std::string>{};
      json replica = range_json(buffers, r.range);
      replica["rank"] = r.rank;
      replicas.push_back(std::move(replica));
    }
    json c{{"tensor", check.tensor}, {"replicas", std::move(replicas)}};
    // A reference check keeps saying so: reading it back computes the same values again.
    if (check.expected_reference) {
      c["expected"] = "reference";
    } else if (!check.expected.empty()) {
      c["expected"] = floats(check.expected);
    }
    j["checks"].push_back(std::move(c));
  }
  return j;
}

std::string scenario_to_text(const Scenario& scenario) {
  std::string out;
  pretty(scenario_to_json(scenario), out, 0);
  return out + "\n";
}

void save_scenario_file(const Scenario& scenario, const std::string& path) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream file(temp, std::ios::binary | std::ios::trunc);
    if (!file) throw InputError(fmt::format("{}: cannot write scenario file", path));
    file << scenario_to_text(scenario);
    if (!file.flush()) throw InputError(fmt::format("{}: cannot write scenario file", path));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw InputError(fmt::format("{}: cannot move the written scenario into place", path));
  }
}

}  // namespace amaxcheck
