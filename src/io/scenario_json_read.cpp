// JSON -> Scenario: the protocol form (a protocol and its knobs) or the full explicit form.
// Fields are read with their paths (JsonField) and the result is checked structurally
// (validate_scenario), so every error names the field and what was expected.
#include <fmt/format.h>

#include "io/json_field.h"
#include "io/json_file.h"
#include "io/scenario_json.h"
#include "io/scenario_reference.h"
#include "io/scenario_template.h"
#include "io/scenario_validate.h"
#include "protocols/protocol.h"
#include "protocols/protocol_size.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck {
namespace {

using nlohmann::json;

/// Resolves a reference to a named item: a name from `names`, or an index (checked later by
/// validate_scenario, which knows what the index must fit).
std::uint32_t resolve(const JsonField& field, const std::vector<std::string>& names, const char* what) {
  if (field.json().is_string()) {
    const std::string name = field.as_string();
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] != name) continue;
      // Communicators may share a name (the program's own splits of unnamed ranks do), but a
      // name that stands for two cannot be followed: it once silently meant the first.
      for (std::size_t j = i + 1; j < names.size(); ++j) {
        if (names[j] == name) {
          field.fail(fmt::format("{} name \"{}\" is ambiguous: {} {} and {} have it; refer to one by index", what, name,
                                 what, i, j));
        }
      }
      return static_cast<std::uint32_t>(i);
    }
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    field.fail(fmt::format("no {} named \"{}\"; expected one of: {}", what, name, known.empty() ? "(none)" : known));
  }
  if (!field.json().is_number_integer()) field.fail(fmt::format("expected a {} name or index", what));
  return field.as_uint();
}

template <typename Named>
std::vector<std::string> names_of(const std::vector<Named>& items) {
  std::vector<std::string> names;
  for (const auto& item : items) names.push_back(item.name);
  return names;
}

std::vector<std::string> strings(const JsonField& field) {
  std::vector<std::string> values;
  for (const JsonField& item : field.items()) values.push_back(item.as_string());
  return values;
}

/// A range: {"buffer": name|index, "offset": N (default 0), "count": N (default: to the end)}.
/// A check's replica also carries its "rank".
Range read_range(const JsonField& field, const Rank& rank, bool replica = false) {
  if (replica) {
    field.allow_only({"rank", "buffer", "offset", "count"});
  } else {
    field.allow_only({"buffer", "offset", "count"});
  }
  Range range;
  range.buffer = resolve(field.at("buffer"), names_of(rank.buffers), "buffer");
  if (auto offset = field.find("offset")) range.offset = offset->as_uint();
  if (auto count = field.find("count")) {
    range.count = count->as_uint();
  } else if (range.buffer < rank.buffers.size() && range.offset <= rank.buffers[range.buffer].size) {
    range.count = rank.buffers[range.buffer].size - range.offset;  // the rest of the buffer
  }
  return range;
}

OpKind read_kind(const JsonField& field) {
  const std::string text = field.as_string();
  if (auto kind = parse_enum<OpKind>(text)) return *kind;
  field.fail(fmt::format("unknown op kind \"{}\"; expected one of: {}", text, enum_name_list<OpKind>(", ")));
}

Op read_op(const JsonField& field, const Rank& rank, const std::vector<std::string>& comms) {
  field.allow_only({"kind", "name", "origin", "stream", "event", "comm", "reduce", "dtype", "root", "format", "scale",
                    "reads", "writes", "values", "flag", "count", "peer", "group", "cost_us", "cost_bytes", "cost_flops",
                    "comment"});
  Op op;
  op.kind = read_kind(field.at("kind"));
  if (auto f = field.find("name")) op.name = f->as_string();
  if (auto f = field.find("origin")) op.origin = f->as_string();
  // Fields the kind needs (model/op_kind.h) are required; the rest are optional (and kept, for a
  // lossless round trip).
  const auto field_for = [&](const char* key, bool required) -> std::optional<JsonField> {
    return required ? std::optional<JsonField>(field.at(key)) : field.find(key);
  };
  const auto needs = [&](OpField f) { return has_field(op.kind, f); };
  if (auto f = field_for("stream", needs(field_stream))) op.stream = resolve(*f, names_of(rank.streams), "stream");
  if (auto f = field_for("event", needs(field_event))) op.event = resolve(*f, names_of(rank.events), "event");
  if (auto f = field_for("comm", needs(field_comm))) op.comm = resolve(*f, comms, "communicator");
  if (auto f = field_for("reduce", needs(field_reduce))) op.reduce = f->as_enum<ReduceOp>();
  if (auto f = field.find("dtype")) op.dtype = f->as_enum<Dtype>();
  if (auto f = field_for("root", needs(field_root))) op.root = f->as_uint();
  if (auto f = field_for("peer", needs(field_peer))) op.peer = f->as_uint();
  if (auto f = field.find("group")) op.group = f->as_uint();
  if (auto f = field_for("format", needs(field_format))) op.format = f->as_enum<Fp8Format>();
  if (auto f = field_for("scale", needs(field_scale))) {
    f->allow_only({"tensors", "history_len", "algo", "margin", "format"});
    op.scale.tensors = f->at("tensors").as_uint();
    op.scale.history_len = f->at("history_len").as_uint();
    if (auto a = f->find("algo")) op.scale.algo = a->as_enum<HistoryAlgo>();
    if (auto m = f->find("margin")) op.scale.margin = m->as_int(-64, 64);
    op.scale.format = f->at("format").as_enum<Fp8Format>();
  }
  if (auto f = field_for("reads", needs(field_reads))) {
    for (const JsonField& r : f->items()) op.reads.push_back(read_range(r, rank));
  }
  if (auto f = field_for("writes", needs(field_writes))) {
    for (const JsonField& r : f->items()) op.writes.push_back(read_range(r, rank));
  }
  if (auto f = field_for("values", needs(field_values))) op.values = f->as_floats();
  if (auto f = field_for("flag", needs(field_flag))) op.flag = resolve(*f, rank.flags, "flag");
  if (auto f = field_for("count", needs(field_count))) op.count = f->as_uint();
  if (auto f = field.find("cost_us")) {
    op.cost_us = f->as_double();
    if (!(op.cost_us >= 0) || op.cost_us > 1e12) f->fail("expected a non-negative cost in microseconds");
  }
  if (auto f = field.find("cost_bytes")) op.cost_bytes = f->as_uint64();
  if (auto f = field.find("cost_flops")) op.cost_flops = f->as_uint64();
  return op;
}

/// Names are how ops refer to streams, events, buffers and flags: they must be unique.
void unique_names(const JsonField& list, const std::vector<std::string>& names, const char* what) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (names[i] == names[j]) {
        list.items()[i].fail(fmt::format("duplicate {} name \"{}\" (also at index {}); names must be unique", what,
                                         names[i], j));
      }
    }
  }
}

Rank read_rank(const JsonField& field, const std::vector<std::string>& comms) {
  field.allow_only({"name", "device", "threads", "streams", "events", "buffers", "flags", "comment"});
  Rank rank;
  if (auto f = field.find("name")) rank.name = f->as_string();
  if (auto f = field.find("device")) rank.device = f->as_uint();
  if (auto f = field.find("streams")) {
    for (std::string& name : strings(*f)) rank.streams.push_back(Stream{std::move(name)});
    unique_names(*f, names_of(rank.streams), "stream");
  }
  if (auto f = field.find("events")) {
    for (std::string& name : strings(*f)) rank.events.push_back(Event{std::move(name)});
    unique_names(*f, names_of(rank.events), "event");
  }
  if (auto f = field.find("flags")) {
    rank.flags = strings(*f);
    unique_names(*f, rank.flags, "flag");
  }
  if (auto f = field.find("buffers")) {
    for (const JsonField& b : f->items()) {
      b.allow_only({"name", "size", "host", "init", "comment"});
      Buffer buffer;
      buffer.name = b.at("name").as_string();
      buffer.size = b.at("size").as_uint();
      if (auto h = b.find("host")) buffer.host = h->as_bool();
      if (auto i = b.find("init")) buffer.init = i->as_floats();
      rank.buffers.push_back(std::move(buffer));
    }
    unique_names(*f, names_of(rank.buffers), "buffer");
  }
  for (const JsonField& t : field.at("threads").items()) {
    t.allow_only({"name", "program", "comment"});
    Thread thread;
    if (auto n = t.find("name")) thread.name = n->as_string();
    for (const JsonField& op : t.at("program").items()) thread.program.push_back(read_op(op, rank, comms));
    rank.threads.push_back(std::move(thread));
  }
  return rank;
}

Scenario read_explicit(const JsonField& original, const std::string& where, const BeforeBuild& before_build) {
  original.allow_only({"name", "source", "kernels", "comms", "ranks", "checks", "comment"});
  const ExpandedRanks expanded = expand_templates(original, [&](const ScenarioSize& size) {
    if (!before_build) return;
    try {
      before_build(size, "expanded rank templates");
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", where, e.what()));
    }
  });
  const JsonField doc = expanded.expanded ? JsonField(expanded.doc, "", where) : original;
  Scenario s;
  s.name = doc.find("name") ? doc.at("name").as_string() : where;
  s.source = doc.find("source") ? doc.at("source").as_string() : where;
  if (auto f = doc.find("kernels")) {
    s.kernels = f->as_enum<KernelConcurrency>();
  }
  if (auto f = doc.find("comms")) {
    for (const JsonField& c : f->items()) {
      c.allow_only({"name", "members", "comment"});
      Communicator comm;
      if (auto n = c.find("name")) comm.name = n->as_string();
      for (const JsonField& m : c.at("members").items()) comm.members.push_back(m.as_uint());
      s.comms.push_back(std::move(comm));
    }
  }
  const auto comm_names = names_of(s.comms);
  const std::vector<JsonField> ranks = doc.at("ranks").items();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    s.ranks.push_back(read_rank(JsonField(ranks[r].json(), expanded.rank_paths.at(r), where), comm_names));
  }
  if (auto f = doc.find("checks")) {
    for (const JsonField& c : f->items()) {
      c.allow_only({"tensor", "replicas", "expected", "comment"});
      ReplicaCheck check;
      check.tensor = c.at("tensor").as_string();
      for (const JsonField& r : c.at("replicas").items()) {
        ReplicaCheck::Replica replica;
        const JsonField rank = r.at("rank");
        replica.rank = rank.as_uint();
        if (replica.rank >= s.ranks.size()) {
          rank.fail(fmt::format("rank {} out of range (the scenario has {} ranks)", replica.rank, s.ranks.size()));
        }
        replica.range = read_range(r, s.ranks[replica.rank], true);
        check.replicas.push_back(replica);
      }
      if (auto e = c.find("expected")) {
        if (!e->json().is_string()) {
          check.expected = e->as_floats();
        } else if (e->as_string() == "reference") {
          check.expected_reference = true;  // computed below, once the program is known to be sound
        } else {
          e->fail_choice("an array of values or \"reference\"");
        }
      }
      s.checks.push_back(std::move(check));
    }
  }
  validate_scenario(s, where, expanded.rank_paths);
  compute_reference_expectations(s, where);
  return s;
}

/// A knob value from JSON as the text the command line would carry.
std::vector<std::string> knob_texts(const JsonField& value, const KnobDoc& doc) {
  const json& v = value.json();
  if (v.is_string()) return {v.get<std::string>()};
  if (v.is_boolean()) return {v.get<bool>() ? "on" : "off"};
  if (v.is_number_integer()) return {v.dump()};
  if (v.is_number_float()) return {fmt::format("{}", v.get<double>())};
  if (v.is_array() && doc.repeatable) {
    std::vector<std::string> texts;
    for (const JsonField& item : value.items()) {
      if (!item.json().is_string() && !item.json().is_number()) item.fail("expected a string");
      texts.push_back(item.json().is_string() ? item.json().get<std::string>() : item.json().dump());
    }
    return texts;
  }
  if (v.is_array() && doc.name == "group") {  // [[0,1],[2,3]] -> "0,1/2,3"
    std::string text;
    for (const JsonField& list : value.items()) {
      text += text.empty() ? "" : "/";
      std::string ranks;
      for (const JsonField& r : list.items()) ranks += (ranks.empty() ? "" : ",") + std::to_string(r.as_uint());
      text += ranks;
    }
    return {text};
  }
  value.fail(doc.repeatable ? "expected a string or an array of strings" : "expected a string, number or boolean");
}

Scenario read_protocol(const JsonField& doc, const std::string& where, const BeforeBuild& before_build) {
  doc.allow_only({"protocol", "knobs", "name", "comment"});
  const JsonField name = doc.at("protocol");
  ProtocolKnobs knobs;
  const auto protocol = parse_protocol(name.as_string());
  if (!protocol) {
    std::string all;
    for (const ProtocolDoc& p : protocol_docs()) all += (all.empty() ? "" : ", ") + p.name;
    name.fail(fmt::format("unknown protocol \"{}\"; expected one of: {}", name.as_string(), all));
  }
  knobs.protocol = *protocol;
  if (auto f = doc.find("knobs")) {
    f->expect_object();
    const std::vector<KnobDoc> docs = knob_docs();
    for (auto it = f->json().begin(); it != f->json().end(); ++it) {
      // Not f->find: it skips a null member, which must fail as a bad knob value instead.
      const JsonField value(it.value(), f->path() + "." + (it.key().empty() ? "\"\"" : it.key()), where);
      const KnobDoc* doc_of = nullptr;
      for (const KnobDoc& d : docs) doc_of = d.name == it.key() ? &d : doc_of;
      if (doc_of == nullptr) {
        std::string all;
        for (const KnobDoc& d : docs) all += (all.empty() ? "" : ", ") + d.name;
        value.fail(fmt::format("unknown knob; expected one of: {}", all));
      }
      for (const std::string& text : knob_texts(value, *doc_of)) {
        if (auto error = try_set_knob(knobs, it.key(), text)) value.fail(*error);
      }
    }
  }
  if (before_build) {
    try {
      before_build(protocol_size(knobs), "protocol point");
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", where, e.what()));
    }
  }
  Scenario scenario;
  try {
    scenario = build_protocol(knobs);
  } catch (const InputError& e) {
    // validate_knobs names knobs as options ("--skip: ..."); in a file they are fields.
    std::string what = e.what();
    if (what.rfind("--", 0) == 0) what = "knobs." + what.substr(2);
    throw InputError(fmt::format("{}: {}", where, what));
  }
  if (auto n = doc.find("name")) scenario.name = n->as_string();
  return scenario;
}

}  // namespace

Scenario scenario_from_json(const json& doc, const std::string& where, const BeforeBuild& before_build) {
  const JsonField root(doc, "", where);
  root.expect_object();
  return doc.contains("protocol") ? read_protocol(root, where, before_build) : read_explicit(root, where, before_build);
}

Scenario load_scenario_file(const std::string& path, const BeforeBuild& before_build) {
  // A path need not be UTF-8; messages, the scenario's default name and traces carry it escaped.
  const std::string where = escape_invalid_utf8(path);
  const json doc = read_json_file(path, "scenario file");
  // Reading input never ends in "internal error": anything the reader did not foresee (a
  // library exception) is still this file's fault and says so. Broken invariants stay exit 3.
  try {
    return scenario_from_json(doc, where, before_build);
  } catch (const InputError&) {
    throw;
  } catch (const InternalError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: cannot read this scenario: {}", where, e.what()));
  }
}

}  // namespace amaxcheck
