// The dump's top level (dump_top.h): its version, and pg_config with its rank lists.
#include "fr/dump_top.h"

#include <fmt/format.h>

#include <algorithm>

#include "fr/describe.h"
#include "fr/dump.h"
#include "fr/readers.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck::fr {
namespace {

[[noreturn]] void bad(const std::string& message) { throw InputError(message); }

bool is_list(const Node& n) { return n.kind == Kind::list || n.kind == Kind::tuple; }

}  // namespace

/// A top-level or pg_config field by key: null when missing or None.
const Node* lookup(const Document& doc, const Node& dict, std::string_view key, NodeId* id) {
  const Node* found = nullptr;
  for (std::size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const Node& kn = doc[dict.items[k]];
    if (kn.kind == Kind::text && kn.text == key) {
      found = &doc[dict.items[k + 1]];
      if (id) *id = dict.items[k + 1];
    }
  }
  return found && found->kind != Kind::none ? found : nullptr;
}

std::string check_version(const Document& doc, const Node* v, NodeId id, const std::string& where) {
  if (!v) bad(fmt::format("{}: missing field 'version'", where));
  std::string text;
  if (v->kind == Kind::text) text = std::string(v->text);
  else if (v->kind == Kind::integer) text = fmt::format("{}", v->integer);
  else if (v->kind == Kind::real) text = fmt::format("{}", v->real);
  // (\d+)(\.\d+)?(\..*)?: a major number, then anything after a dot.
  const std::size_t digits = text.find_first_not_of("0123456789");
  const bool ok = !text.empty() && digits != 0 && (digits == std::string::npos || text[digits] == '.');
  if (!ok || invalid_utf8_at(text) != std::string_view::npos) {
    bad(fmt::format("{}.version: expected a version like \"2.4\", got {}", where, short_value(doc, id)));
  }
  const std::string major = text.substr(0, digits);
  if (major.size() > 3 || std::stoi(major) != 2) {
    bad(fmt::format("{}: Flight Recorder dump version {} is not supported (expected 2.x)", where, bounded_text(text, where)));
  }
  return text;
}

namespace {

std::vector<std::int64_t> parse_ranks(const Document& doc, NodeId id, const std::string& where) {
  std::unique_ptr<Document> parsed;
  const Document* from = &doc;
  NodeId list = id;
  if (doc[id].kind == Kind::text) {  // PyTorch writes the ranks as a string like "[0, 1]"
    try {
      parsed = read_json(std::string(doc[id].text));
    } catch (const TooDeep&) {
      bad(fmt::format("{}: expected a rank list like \"[0, 1]\", got a list nested too deeply", where));
    } catch (const std::runtime_error&) {
      bad(fmt::format("{}: expected a rank list like \"[0, 1]\", got {}", where, short_value(doc, id)));
    }
    from = parsed.get();
    list = parsed->root;
  }
  const Node& n = (*from)[list];
  std::vector<std::int64_t> ranks;
  bool ok = is_list(n);
  for (std::size_t i = 0; ok && i < n.items.size(); ++i) {
    const Node& r = (*from)[n.items[i]];
    ok = r.kind == Kind::integer && r.integer >= 0 && r.integer < max_rank;
    ranks.push_back(r.integer);
  }
  if (!ok) bad(fmt::format("{}: expected a list of non-negative ranks, got {}", where, short_value(*from, list)));
  std::vector<std::int64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    bad(fmt::format("{}: a rank appears twice in [{}]", where, fmt::join(ranks, ", ")));
  }
  return ranks;
}

}  // namespace

std::vector<ProcessGroup> read_pg_config(const Document& doc, const Node& config, const std::string& where) {
  std::vector<ProcessGroup> out;
  for (std::size_t k = 0; k + 1 < config.items.size(); k += 2) {
    const Node& key = doc[config.items[k]];
    const std::string shown = short_value(doc, config.items[k]);
    const std::string pw = fmt::format("{}: pg_config[{}]", where, shown);
    const Node& pg = doc[config.items[k + 1]];
    if (pg.kind != Kind::dict) bad(fmt::format("{}: expected an object with name, desc, ranks", pw));
    const std::string key_text = key.kind == Kind::text ? bounded_text(key.text, pw)
                                 : key.kind == Kind::integer ? fmt::format("{}", key.integer) : shown;
    NodeId name_id = 0, desc_id = 0, ranks_id = 0;
    const Node* name = lookup(doc, pg, "name", &name_id);
    const Node* desc = lookup(doc, pg, "desc", &desc_id);
    const Node* ranks = lookup(doc, pg, "ranks", &ranks_id);
    ProcessGroup group;
    if (name && name->kind != Kind::text) bad(fmt::format("{}.name: expected a string, got {} {}", pw, python_type_name(name->kind), short_value(doc, name_id)));
    if (desc && desc->kind != Kind::text) bad(fmt::format("{}.desc: expected a string, got {} {}", pw, python_type_name(desc->kind), short_value(doc, desc_id)));
    group.name = name ? bounded_text(name->text, pw + ".name") : key_text;
    group.desc = desc ? bounded_text(desc->text, pw + ".desc") : "";
    group.key = key_text;
    if (key_text.empty()) {  // gloo: one entry, for the last group created, keyed ''
      if (group.name.empty()) continue;
      group.key = group.name;
    }
    if (!ranks) bad(fmt::format("{}: missing field 'ranks'", pw));
    if (ranks->kind != Kind::text && !is_list(*ranks)) {
      bad(fmt::format("{}.ranks: expected a string or a list, got {} {}", pw, python_type_name(ranks->kind), short_value(doc, ranks_id)));
    }
    group.ranks = parse_ranks(doc, ranks_id, pw + ".ranks");
    auto same = std::find_if(out.begin(), out.end(), [&](const ProcessGroup& g) { return g.key == group.key; });
    if (same != out.end()) *same = std::move(group);
    else out.push_back(std::move(group));
  }
  return out;
}

}  // namespace amaxcheck::fr
