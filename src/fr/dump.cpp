// Validating a Document into a Dump (dump.h). Everything a pickle's memo shares is read once:
// the validator caches its results by node.
#include "fr/dump.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <unordered_map>

#include "fr/describe.h"
#include "fr/dump_top.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck::fr {
namespace {


// The entry fields read, in one table: a key's slot is found once per key node.
enum Field : std::uint8_t {
  f_record_id, f_pg_id, f_process_group, f_collective_seq_id, f_p2p_seq_id, f_op_id, f_profiling_name,
  f_input_sizes, f_input_dtypes, f_output_sizes, f_output_dtypes, f_state, f_time_created_ns, f_is_p2p,
  f_timeout_ms, f_duration_ms, f_frames, f_retired, f_time_discovered_started_ns,
  f_time_discovered_completed_ns, field_count
};
constexpr std::array<std::string_view, field_count> field_names = {
    "record_id", "pg_id", "process_group", "collective_seq_id", "p2p_seq_id", "op_id", "profiling_name",
    "input_sizes", "input_dtypes", "output_sizes", "output_dtypes", "state", "time_created_ns", "is_p2p",
    "timeout_ms", "duration_ms", "frames", "retired", "time_discovered_started_ns",
    "time_discovered_completed_ns"};
constexpr std::int16_t unknown_key = -1, unseen_key = -2;

std::uint32_t fnv1a(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

[[noreturn]] void bad(const std::string& message) { throw InputError(message); }

/// Where a value sits, spelled only when a message needs it (built for every entry's fields, it
/// would cost more than reading them): "PATH: entries[3].input_dtypes[1]".
struct Where {
  std::string_view base;  // the file, or a full path already spelled
  std::size_t entry = std::string_view::npos;
  std::string_view field = {};
  std::size_t item = std::string_view::npos;
  std::string_view sub = {};

  Where at(std::size_t i) const { Where w = *this; w.item = i; return w; }
  Where dot(std::string_view s) const { Where w = *this; w.sub = s; return w; }
  std::string str() const {
    std::string out(base);
    if (entry != std::string_view::npos) out += fmt::format(": entries[{}]", entry);
    if (!field.empty()) out += fmt::format(".{}", field);
    if (item != std::string_view::npos) out += fmt::format("[{}]", item);
    if (!sub.empty()) out += fmt::format(".{}", sub);
    return out;
  }
};

bool is_list(const Node& n) { return n.kind == Kind::list || n.kind == Kind::tuple; }

class Validator {
 public:
  Validator(const Document& doc, Dump& dump)
      : doc_(doc), dump_(dump), key_slot_(doc.size(), unseen_key), text_of_node_(doc.size(), none),
        sizes_of_node_(doc.size(), none), strings_of_node_(doc.size(), none), stack_of_node_(doc.size(), none) {
    dump_.texts.emplace_back();
    dump_.shapes.emplace_back();
    dump_.string_lists.emplace_back();
    dump_.stacks.emplace_back();
  }

  /// `id` as kept (bounded_text), shared by every reference to the node and by equal content.
  TextId text(NodeId id, const Where& where) {
    if (text_of_node_[id] != none) return text_of_node_[id];
    const std::string_view raw = doc_[id].text;
    const bool valid = invalid_utf8_at(raw) == std::string_view::npos;
    if (valid && raw.size() <= max_text) {  // kept as it is: look it up without a copy
      if (auto it = text_ids_.find(raw); it != text_ids_.end()) return text_of_node_[id] = it->second;
    }
    const TextId t = intern(bounded_text(raw, valid ? std::string() : where.str()));
    text_of_node_[id] = t;
    return t;
  }
  /// A frame's name or file: any value, shown short when it is not a string.
  TextId frame_text(NodeId id, const Where& where) {
    if (doc_[id].kind == Kind::text) return text(id, where);
    return intern(short_value(doc_, id));
  }
  TextId intern(std::string value) {
    if (auto it = text_ids_.find(value); it != text_ids_.end()) return it->second;
    const auto t = static_cast<TextId>(dump_.texts.size());
    dump_.texts.push_back(value);
    text_ids_.emplace(std::move(value), t);
    return t;
  }

  std::uint32_t sizes(NodeId id, const Where& where) {
    if (sizes_of_node_[id] != none) return sizes_of_node_[id];
    const Node& n = doc_[id];
    std::vector<Shape> value;
    bool ok = is_list(n);
    for (std::size_t i = 0; ok && i < n.items.size(); ++i) {
      const Node& s = doc_[n.items[i]];
      ok = is_list(s);
      Shape shape;
      for (std::size_t j = 0; ok && j < s.items.size(); ++j) {
        const Node& d = doc_[s.items[j]];
        ok = d.kind == Kind::integer && d.integer >= 0;
        shape.push_back(d.integer);
      }
      value.push_back(std::move(shape));
    }
    if (!ok) {
      bad(fmt::format("{}: expected a list of shapes (lists of non-negative integers), got {}", where.str(),
                      short_value(doc_, id)));
    }
    auto [it, fresh] = shape_ids_.try_emplace(value, static_cast<std::uint32_t>(dump_.shapes.size()));
    if (fresh) dump_.shapes.push_back(std::move(value));
    sizes_of_node_[id] = it->second;
    return it->second;
  }

  std::uint32_t strings(NodeId id, const Where& where) {
    if (strings_of_node_[id] != none) return strings_of_node_[id];
    const Node& n = doc_[id];
    bool ok = is_list(n);
    for (std::size_t i = 0; ok && i < n.items.size(); ++i) ok = doc_[n.items[i]].kind == Kind::text;
    if (!ok) bad(fmt::format("{}: expected a list of strings, got {}", where.str(), short_value(doc_, id)));
    std::vector<TextId> value;
    for (std::size_t i = 0; i < n.items.size(); ++i) value.push_back(text(n.items[i], where.at(i)));
    auto [it, fresh] = list_ids_.try_emplace(value, static_cast<std::uint32_t>(dump_.string_lists.size()));
    if (fresh) dump_.string_lists.push_back(std::move(value));
    strings_of_node_[id] = it->second;
    return it->second;
  }

  /// The stack of the first max_frames frames, and how many more there were.
  std::pair<std::uint32_t, std::uint32_t> frames(NodeId id, const Where& where) {
    const Node& n = doc_[id];
    if (!is_list(n)) bad(fmt::format("{}: expected a list of frames", where.str()));
    const auto dropped = static_cast<std::uint32_t>(n.items.size() > max_frames ? n.items.size() - max_frames : 0);
    if (stack_of_node_[id] != none) return {stack_of_node_[id], dropped};
    std::vector<std::uint32_t> stack;
    for (std::size_t i = 0; i < std::min(n.items.size(), max_frames); ++i) {
      const Node& f = doc_[n.items[i]];
      const Where at = where.at(i);
      if (f.kind != Kind::dict) bad(fmt::format("{}: expected an object with name, filename, line", at.str()));
      Frame frame{intern("?"), intern("?"), 0};
      for (std::size_t k = 0; k + 1 < f.items.size(); k += 2) {
        const Node& key = doc_[f.items[k]];
        if (key.kind != Kind::text) continue;
        const NodeId v = f.items[k + 1];
        if (key.text == "name") frame.name = frame_text(v, at.dot("name"));
        else if (key.text == "filename") frame.filename = frame_text(v, at.dot("filename"));
        else if (key.text == "line") {
          const Node& line = doc_[v];
          frame.line = line.kind == Kind::integer && line.integer >= 0 && line.integer < (std::int64_t{1} << 31)
                           ? line.integer : 0;
        }
      }
      const std::array<std::int64_t, 3> content{frame.name, frame.filename, frame.line};
      auto [it, fresh] = frame_ids_.try_emplace(content, static_cast<std::uint32_t>(dump_.frames.size()));
      if (fresh) dump_.frames.push_back(frame);
      stack.push_back(it->second);
    }
    auto [it, fresh] = stack_ids_.try_emplace(stack, static_cast<std::uint32_t>(dump_.stacks.size()));
    if (fresh) dump_.stacks.push_back(std::move(stack));
    stack_of_node_[id] = it->second;
    return {it->second, dropped};
  }

  /// The slot of a key node, or unknown_key (its text, shown, goes to ignored_fields).
  std::int16_t slot(NodeId key) {
    std::int16_t& s = key_slot_[key];
    if (s != unseen_key) return s;
    s = unknown_key;
    const Node& k = doc_[key];
    if (k.kind == Kind::text) {
      for (std::size_t f = 0; f < field_count; ++f) {
        if (field_names[f] == k.text) s = static_cast<std::int16_t>(f);
      }
    }
    if (s == unknown_key) {
      std::string shown = k.kind == Kind::text ? escape_invalid_utf8(k.text) : short_value(doc_, key);
      if (count_code_points(shown) > max_text) {
        shown = fmt::format("{}... ({} chars)", prefix_code_points(shown, max_text), count_code_points(shown));
      }
      ignored_.insert(std::move(shown));
    }
    return s;
  }

  Record record(NodeId id, std::uint32_t index, const Where& where);
  void finish() { dump_.ignored_fields.assign(ignored_.begin(), ignored_.end()); }

  const Document& doc_;
  Dump& dump_;

 private:
  std::vector<std::int16_t> key_slot_;
  // What each node was read as, by node: a shared node is read once.
  static constexpr std::uint32_t none = UINT32_MAX;
  std::vector<TextId> text_of_node_;
  std::vector<std::uint32_t> sizes_of_node_, strings_of_node_, stack_of_node_;
  struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, TextId, TextHash, std::equal_to<>> text_ids_;
  std::map<std::vector<Shape>, std::uint32_t> shape_ids_;
  std::map<std::vector<TextId>, std::uint32_t> list_ids_;
  std::map<std::array<std::int64_t, 3>, std::uint32_t> frame_ids_;
  std::map<std::vector<std::uint32_t>, std::uint32_t> stack_ids_;
  std::set<std::string> ignored_;
};

/// Typed access to one entry's fields, with errors that name the path to the field.
struct Fields {
  static constexpr NodeId absent = UINT32_MAX;
  const Document& doc;
  const Where& where;
  std::array<NodeId, field_count> ids;  // absent: missing or None

  bool has(Field f) const { return ids[f] != absent; }
  const Node& node(Field f) const { return doc[ids[f]]; }
  Where of(Field f) const { Where w = where; w.field = field_names[f]; return w; }
  [[noreturn]] void wrong(Field f, const char* expected) const {
    const Node& n = node(f);
    if (n.kind == Kind::boolean) bad(fmt::format("{}: expected {}, got a boolean", of(f).str(), expected));
    bad(fmt::format("{}: expected {}, got {} {}", of(f).str(), expected, python_type_name(n.kind), short_value(doc, ids[f])));
  }
  const Node& required(Field f) const {
    if (!has(f)) bad(fmt::format("{}: missing field '{}'", where.str(), field_names[f]));
    return node(f);
  }
  std::int64_t integer(Field f, std::int64_t fallback) const {
    if (!has(f)) return fallback;
    if (node(f).kind == Kind::big_integer) {
      bad(fmt::format("{}: expected an integer in -2^63..2^63-1, got {}", of(f).str(), short_value(doc, ids[f])));
    }
    if (node(f).kind != Kind::integer) wrong(f, "an integer");
    return node(f).integer;
  }
  std::int64_t count(Field f, std::optional<std::int64_t> fallback) const {
    if (!has(f) && fallback) return *fallback;
    const Node& n = required(f);
    if (n.kind != Kind::integer && n.kind != Kind::big_integer) wrong(f, "an integer");
    if (n.kind == Kind::big_integer || n.integer < 0) {
      bad(fmt::format("{}: expected an integer in 0..2^63-1, got {}", of(f).str(), short_value(doc, ids[f])));
    }
    return n.integer;
  }
  const Node& list(Field f) const {
    if (!is_list(node(f))) wrong(f, "a list");
    return node(f);
  }
};

Record Validator::record(NodeId id, std::uint32_t index, const Where& where) {
  const Node& entry = doc_[id];
  if (entry.kind != Kind::dict) bad(fmt::format("{}: expected an object, got {}", where.str(), python_type_name(entry.kind)));
  Fields f{doc_, where, {}};
  f.ids.fill(Fields::absent);
  for (std::size_t k = 0; k + 1 < entry.items.size(); k += 2) {
    const std::int16_t s = slot(entry.items[k]);
    if (s < 0) continue;
    const NodeId v = entry.items[k + 1];
    f.ids[static_cast<std::size_t>(s)] = doc_[v].kind == Kind::none ? Fields::absent : v;
  }
  Record r;
  r.index = index;
  f.required(f_process_group);
  const Node& pg = f.list(f_process_group);
  bool names_ok = !pg.items.empty();
  for (NodeId p : pg.items) names_ok = names_ok && doc_[p].kind == Kind::text;
  if (!names_ok) bad(fmt::format("{}: expected [name, desc], got {}", f.of(f_process_group).str(), short_value(doc_, f.ids[f_process_group])));
  const Node& state = f.required(f_state);
  if (state.kind != Kind::text) f.wrong(f_state, "a string");
  const auto found = std::find(std::begin(state_names), std::end(state_names), state.text);
  if (found == std::end(state_names)) {
    bad(fmt::format("{}: expected one of ['scheduled', 'started', 'completed'], got {}", f.of(f_state).str(),
                    short_value(doc_, f.ids[f_state])));
  }
  r.state = static_cast<State>(found - std::begin(state_names));
  if (f.has(f_duration_ms)) {
    const Node& d = f.node(f_duration_ms);
    if (d.kind == Kind::integer) r.duration_ms = static_cast<double>(d.integer);
    else if (d.kind == Kind::real) r.duration_ms = d.real;
    else f.wrong(f_duration_ms, "an integer or a number");
  }
  if (f.has(f_frames)) {
    f.list(f_frames);
    std::tie(r.stack, r.frames_dropped) = frames(f.ids[f_frames], f.of(f_frames));
  }
  r.record_id = f.count(f_record_id, std::nullopt);
  r.pg_name = text(pg.items[0], f.of(f_process_group).at(0));
  r.pg_desc = pg.items.size() > 1 ? text(pg.items[1], f.of(f_process_group).at(1)) : 0;
  r.collective_seq_id = f.count(f_collective_seq_id, std::nullopt);
  r.p2p_seq_id = f.count(f_p2p_seq_id, 0);
  r.op_id = f.integer(f_op_id, 0);
  if (f.required(f_profiling_name).kind != Kind::text) f.wrong(f_profiling_name, "a string");
  r.profiling_name = text(f.ids[f_profiling_name], f.of(f_profiling_name));
  f.required(f_input_sizes);
  f.list(f_input_sizes);
  r.input_sizes = sizes(f.ids[f_input_sizes], f.of(f_input_sizes));
  if (f.has(f_output_sizes)) {
    f.list(f_output_sizes);
    r.output_sizes = sizes(f.ids[f_output_sizes], f.of(f_output_sizes));
  }
  for (auto [field, out] : {std::pair{f_input_dtypes, &r.input_dtypes}, std::pair{f_output_dtypes, &r.output_dtypes}}) {
    if (!f.has(field)) continue;
    f.list(field);
    *out = strings(f.ids[field], f.of(field));
  }
  if (f.has(f_is_p2p)) {
    if (f.node(f_is_p2p).kind != Kind::boolean) f.wrong(f_is_p2p, "a boolean");
    r.is_p2p = f.node(f_is_p2p).truth;
  }
  r.time_created_ns = f.integer(f_time_created_ns, 0);
  if (f.has(f_timeout_ms)) r.timeout_ms = f.integer(f_timeout_ms, 0);
  return r;
}

}  // namespace

std::string bounded_text(std::string_view text, const std::string& where) {
  if (const std::size_t at = invalid_utf8_at(text); at != std::string_view::npos) {
    bad(fmt::format("{}: not valid Unicode (ill-formed UTF-8 or a lone surrogate at byte {}: {}); a dump holds UTF-8 text",
                    where, at, escape_invalid_utf8(text.substr(at, 3))));
  }
  if (text.size() <= max_text) return std::string(text);  // bytes >= characters
  const std::size_t chars = count_code_points(text);
  if (chars <= max_text) return std::string(text);
  return fmt::format("{}...({} chars, {:08x})", prefix_code_points(text, max_text), chars, fnv1a(text));
}

Dump validate_dump(const Document& doc, const std::string& path, std::int64_t fallback_rank) {
  Dump dump;
  dump.path = path;
  const Node& top = doc[doc.root];
  if (top.kind != Kind::dict) {
    bad(fmt::format("{}: expected a dict at the top level (a Flight Recorder dump), got {}", path, python_type_name(top.kind)));
  }
  NodeId version_id = 0, config_id = 0, entries_id = 0;
  // Looked up first: as arguments of one call, the lookup that sets version_id and the read of
  // it are unordered, and GCC read it first (the message then showed the top-level dict).
  const Node* version = lookup(doc, top, "version", &version_id);
  dump.version = check_version(doc, version, version_id, path);
  NodeId rank_id = 0;
  const Node* rank = lookup(doc, top, "rank", &rank_id);
  if (rank && rank->kind == Kind::integer && rank->integer >= 0 && rank->integer < max_rank) {
    dump.rank = rank->integer;
  } else if (rank) {
    // Once ignored for the file name's number: a dump that says which rank it is, wrongly, is
    // not a dump of some other rank.
    bad(fmt::format("{}.rank: expected a rank from 0 to {}, got {} {}", path, max_rank - 1, python_type_name(rank->kind),
                    short_value(doc, rank_id)));
  } else {
    dump.rank = rank_from_name(path).value_or(fallback_rank);
  }
  if (const Node* config = lookup(doc, top, "pg_config", &config_id)) {
    if (config->kind != Kind::dict) {
      bad(fmt::format("{}.pg_config: expected an object, got {} {}", path, python_type_name(config->kind), short_value(doc, config_id)));
    }
    dump.pg_config = read_pg_config(doc, *config, path);
  }
  const Node* entries = lookup(doc, top, "entries", &entries_id);
  if (!entries) bad(fmt::format("{}: missing field 'entries'", path));
  if (!is_list(*entries)) {
    bad(fmt::format("{}.entries: expected a list, got {} {}", path, python_type_name(entries->kind), short_value(doc, entries_id)));
  }
  if (entries->items.size() > max_entries) {
    bad(fmt::format("{}: entries: {} records, over the limit of {} (PyTorch keeps 2000 by default)", path,
                    entries->items.size(), max_entries));
  }
  Validator v(doc, dump);
  dump.records.reserve(entries->items.size());
  for (std::size_t i = 0; i < entries->items.size(); ++i) {
    dump.records.push_back(v.record(entries->items[i], static_cast<std::uint32_t>(i), Where{path, i}));
  }
  v.finish();
  std::stable_sort(dump.records.begin(), dump.records.end(),
                   [](const Record& a, const Record& b) { return a.record_id < b.record_id; });
  for (std::size_t i = 1; i < dump.records.size(); ++i) {
    if (dump.records[i].record_id == dump.records[i - 1].record_id) bad(fmt::format("{}: entries: a record_id appears twice", path));
  }
  return dump;
}

}  // namespace amaxcheck::fr
