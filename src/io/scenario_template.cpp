// Per-rank templates: JSON in, JSON out, every mistake named by the template's field path.
#include "io/scenario_template.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string_view>

#include "util/check.h"

namespace amaxcheck {
namespace {

using nlohmann::json;

/// The rank a template is being expanded for, and how many ranks the scenario has.
struct Instance {
  std::uint32_t rank = 0;
  std::uint32_t ranks = 0;
};

[[noreturn]] void fail_at(const JsonField& field, const Instance& at, const std::string& what) {
  field.fail(fmt::format("{} (expanding the template for rank {})", what, at.rank));
}

std::string outside(std::int64_t rank, std::uint32_t ranks) {
  return fmt::format("rank {} is outside the scenario, which has {} ranks (0..{})", rank, ranks, ranks - 1);
}

/// `rank`, `rank+K`, `rank-K` or `rank^K` (spaces allowed around the operator).
std::int64_t evaluate(const JsonField& field, std::string_view text, const Instance& at) {
  const auto bad = [&]() -> std::int64_t {
    fail_at(field, at, fmt::format("{{{}}}: expected {{rank}}, {{rank+K}}, {{rank-K}} or {{rank^K}}", text));
  };
  const auto trim = [](std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
  };
  std::string_view rest = trim(text);
  if (!rest.starts_with("rank")) return bad();
  rest = trim(rest.substr(4));
  if (rest.empty()) return at.rank;
  const char op = rest.front();
  rest = trim(rest.substr(1));
  std::uint32_t k = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), k);
  if (error != std::errc() || end != rest.data() + rest.size() || (op != '+' && op != '-' && op != '^')) return bad();
  const std::int64_t value = op == '+' ? std::int64_t{at.rank} + k : op == '-' ? std::int64_t{at.rank} - k : at.rank ^ k;
  if (value < 0 || value >= at.ranks) {
    fail_at(field, at,
            fmt::format("{{{}}} is rank {}, outside the scenario, which has {} ranks (0..{}); leave the element out "
                        "on rank {} with \"only\"",
                        text, value, at.ranks, at.ranks - 1, at.rank));
  }
  return value;
}

/// A string with its `{...}` expressions replaced; a string that is one expression is a number.
json substitute_string(const JsonField& field, const Instance& at) {
  const std::string& text = field.json().get_ref<const std::string&>();
  if (text.find_first_of("{}") == std::string::npos) return text;
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '}') fail_at(field, at, "a '}' with no '{' before it");
    if (text[i] != '{') {
      out += text[i++];
      continue;
    }
    const std::size_t close = text.find('}', i);
    if (close == std::string::npos) fail_at(field, at, "a '{' with no '}' after it");
    const std::int64_t value = evaluate(field, std::string_view(text).substr(i + 1, close - i - 1), at);
    if (i == 0 && close == text.size() - 1) return value;
    out += std::to_string(value);
    i = close + 1;
  }
  return out;
}

/// Whether an element with `"only": ...` exists on the instance's rank.
bool only_includes(const JsonField& only, const Instance& at) {
  if (only.json().is_string()) {
    const std::string parity = only.as_string();
    if (parity != "even" && parity != "odd") only.fail_choice("even|odd or an array of ranks");
    return (at.rank % 2 == 0) == (parity == "even");
  }
  bool included = false;
  for (const JsonField& item : only.items()) {
    const std::uint32_t r = item.as_uint();
    if (r >= at.ranks) item.fail(outside(r, at.ranks));
    included |= r == at.rank;
  }
  return included;
}

json substitute(const JsonField& field, const Instance& at) {
  const json& value = field.json();
  if (value.is_string()) return substitute_string(field, at);
  if (value.is_array()) {
    json out = json::array();
    for (const JsonField& item : field.items()) {
      if (item.json().is_object() && item.json().contains("only")) {
        if (!only_includes(item.at("only"), at)) continue;
      }
      out.push_back(substitute(item, at));
    }
    return out;
  }
  if (!value.is_object()) return value;
  if (value.size() == 2 && value.contains("even") && value.contains("odd")) {
    return substitute(field.at(at.rank % 2 == 0 ? "even" : "odd"), at);
  }
  json out = json::object();
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key() == "only") continue;
    out[it.key()] = it.key() == "comment" ? it.value() : substitute(field.at(it.key().c_str()), at);
  }
  return out;
}

bool has_for(const JsonField& item) { return item.json().is_object() && item.json().contains("for"); }

/// The ranks of a `"for"` list, each inside the scenario when its size is known (`ranks` > 0).
std::vector<std::uint32_t> for_list(const JsonField& entry, std::uint32_t ranks) {
  const JsonField list = entry.at("for");
  std::vector<std::uint32_t> out;
  for (const JsonField& item : list.items()) {
    const std::uint32_t r = item.as_uint();
    if (ranks > 0 && r >= ranks) item.fail(outside(r, ranks));
    for (std::uint32_t seen : out) {
      if (seen == r) item.fail(fmt::format("rank {} is listed twice", r));
    }
    out.push_back(r);
  }
  if (out.empty()) list.fail("expected at least one rank");
  return out;
}

/// A check's replicas, with each `"for"` replica expanded into one per listed rank.
json expand_replicas(const JsonField& replicas, std::uint32_t ranks) {
  json out = json::array();
  for (const JsonField& item : replicas.items()) {
    if (!has_for(item)) {
      out.push_back(item.json());
      continue;
    }
    if (item.json().contains("rank")) item.at("rank").fail("a replica with \"for\" takes its rank from the list; expected no \"rank\"");
    for (std::uint32_t r : for_list(item, ranks)) {
      json replica = substitute(item, Instance{r, ranks});
      replica.erase("for");
      replica["rank"] = r;
      out.push_back(std::move(replica));
    }
  }
  return out;
}

}  // namespace

/// The counts of one rank that `entry` (an entry of ranks) describes, counting every element:
/// one with "only" as if it were on every rank, a buffer size given by even/odd as the larger.
/// A size written as a `{rank}` expression, and malformed parts, count nothing (the reader
/// reports the latter after the expansion).
ScenarioSize entry_bound(const json& entry) {
  ScenarioSize one;
  const auto array = [&](const json& object, const char* key) -> const json& {
    static const json none = json::array();
    return object.is_object() && object.contains(key) && object[key].is_array() ? object[key] : none;
  };
  one.ranks = 1;
  one.actors += array(entry, "streams").size();
  for (const json& thread : array(entry, "threads")) {
    ++one.actors;
    for (const json& op : array(thread, "program")) {
      ++one.ops;
      one.ranges += array(op, "reads").size() + array(op, "writes").size();
      one.op_values += array(op, "values").size();
      if (op.is_object() && op.contains("comm")) ++one.collectives;
    }
  }
  for (const json& buffer : array(entry, "buffers")) {
    if (!buffer.is_object() || !buffer.contains("size")) continue;
    const json& size = buffer["size"];
    if (size.is_number_unsigned()) one.buffer_elements += size.get<std::uint64_t>();
    if (size.is_object()) {
      for (const char* side : {"even", "odd"}) {
        if (size.contains(side) && size[side].is_number_unsigned()) {
          one.buffer_elements = std::max(one.buffer_elements, size[side].get<std::uint64_t>());
        }
      }
    }
  }
  return one;
}

/// An upper bound of what the rank entries expand to: each entry's counts times its ranks.
ScenarioSize expansion_bound(const std::vector<JsonField>& entries, const std::vector<std::vector<std::uint32_t>>& lists) {
  ScenarioSize size;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const ScenarioSize one = entry_bound(entries[e].json());
    const std::uint64_t n = lists[e].size();
    size.ranks += n;
    size.actors += n * one.actors;
    size.ops += n * one.ops;
    size.ranges += n * one.ranges;
    size.op_values += n * one.op_values;
    size.collectives += n * one.collectives;
    size.buffer_elements += n * one.buffer_elements;
  }
  return size;
}

ExpandedRanks expand_templates(const JsonField& doc, const std::function<void(const ScenarioSize&)>& before_expand) {
  ExpandedRanks out;
  const std::vector<JsonField> entries = doc.at("ranks").items();
  bool templated = false;
  for (const JsonField& entry : entries) templated |= has_for(entry);
  bool replica_templates = false;
  if (auto checks = doc.find("checks"); checks && checks->json().is_array()) {
    for (const json& check : checks->json()) {
      if (!check.is_object() || !check.contains("replicas") || !check["replicas"].is_array()) continue;
      for (const json& replica : check["replicas"]) replica_templates |= replica.is_object() && replica.contains("for");
    }
  }
  std::uint32_t ranks = static_cast<std::uint32_t>(entries.size());
  for (std::uint32_t r = 0; r < ranks && !templated; ++r) out.rank_paths.push_back(fmt::format("ranks[{}]", r));
  if (!templated && !replica_templates) return out;
  out.expanded = true;
  out.doc = doc.json();
  if (templated) {
    // Which entry describes each rank: the lists together must cover 0..N-1, each once.
    std::vector<std::vector<std::uint32_t>> lists;
    std::uint64_t total = 0;
    for (const JsonField& entry : entries) {
      if (!has_for(entry)) {
        entry.fail("expected a \"for\" list of ranks: when one entry of ranks is a template, every entry names "
                   "the ranks it describes (a single rank is \"for\": [R])");
      }
      lists.push_back(for_list(entry, 0));
      total += lists.back().size();
    }
    if (total > 0xffffffffu) doc.at("ranks").fail("too many ranks");
    ranks = static_cast<std::uint32_t>(total);
    std::vector<std::size_t> owner(ranks, entries.size());
    for (std::size_t e = 0; e < entries.size(); ++e) {
      const std::vector<JsonField> items = entries[e].at("for").items();
      for (std::size_t i = 0; i < lists[e].size(); ++i) {
        const std::uint32_t r = lists[e][i];
        if (r >= ranks) {
          items[i].fail(fmt::format("{}: the entries of ranks describe {} ranks in all, so they must be ranks 0..{}, "
                                    "each once", outside(r, ranks), ranks, ranks - 1));
        }
        if (owner[r] != entries.size()) {
          items[i].fail(fmt::format("rank {} is described twice (also by ranks[{}])", r, owner[r]));
        }
        owner[r] = e;
      }
    }
    if (before_expand) before_expand(expansion_bound(entries, lists));
    out.doc["ranks"] = json::array();
    for (std::uint32_t r = 0; r < ranks; ++r) {
      json rank = substitute(entries[owner[r]], Instance{r, ranks});
      rank.erase("for");
      out.doc["ranks"].push_back(std::move(rank));
      out.rank_paths.push_back(lists[owner[r]].size() == 1 && owner[r] == r
                                   ? fmt::format("ranks[{}]", r)
                                   : fmt::format("ranks[{}] (for rank {})", owner[r], r));
    }
  }
  if (auto checks = doc.find("checks")) {
    const std::vector<JsonField> list = checks->items();
    for (std::size_t c = 0; c < list.size(); ++c) {
      if (!list[c].json().is_object()) continue;  // the reader reports it
      if (auto replicas = list[c].find("replicas")) {
        if (ranks == 0) continue;
        out.doc["checks"][c]["replicas"] = expand_replicas(*replicas, ranks);
      }
    }
  }
  return out;
}

}  // namespace amaxcheck
