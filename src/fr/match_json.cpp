#include "fr/match_json.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace amaxcheck::fr {
namespace {

using json = nlohmann::json;

/// The records a document refers to, each with the texts and call stacks it uses, once.
class Records {
 public:
  explicit Records(const Job& job)
      : job_(job), texts_of_(job.dumps().size()), frames_of_(job.dumps().size()), stacks_of_(job.dumps().size()) {}

  std::uint32_t add(RecordRef ref) {
    const std::uint64_t key = (std::uint64_t{ref.dump} << 32) | ref.record;
    const auto [it, fresh] = index_.emplace(key, static_cast<std::uint32_t>(rows_.size()));
    if (fresh) rows_.push_back(row(ref));
    return it->second;
  }
  json refs(const std::vector<RecordRef>& refs) {
    json out = json::array();
    for (const RecordRef& r : refs) out.push_back(add(r));
    return out;
  }

  void write(json& doc) {
    doc["records"] = std::move(rows_);
    doc["texts"] = std::move(texts_);
    doc["frames"] = std::move(frames_);
    doc["stacks"] = std::move(stacks_);
  }

 private:
  template <typename T>
  static std::uint32_t cached(std::unordered_map<std::uint32_t, std::uint32_t>& cache, std::uint32_t id, json& table,
                              T make) {
    const auto it = cache.find(id);
    if (it != cache.end()) return it->second;
    json value = make();  // may add to other tables first
    const auto index = static_cast<std::uint32_t>(table.size());
    table.push_back(std::move(value));
    cache.emplace(id, index);
    return index;
  }
  std::uint32_t text(std::uint32_t dump, TextId id) {
    return cached(texts_of_[dump], id, texts_, [&] { return json(job_.dumps()[dump].texts[id]); });
  }
  std::uint32_t frame(std::uint32_t dump, std::uint32_t id) {
    return cached(frames_of_[dump], id, frames_, [&] {
      const Frame& f = job_.dumps()[dump].frames[id];
      return json::array({text(dump, f.name), text(dump, f.filename), f.line});
    });
  }
  std::uint32_t stack(std::uint32_t dump, std::uint32_t id) {
    return cached(stacks_of_[dump], id, stacks_, [&] {
      json frames = json::array();
      for (std::uint32_t f : job_.dumps()[dump].stacks[id]) frames.push_back(frame(dump, f));
      return frames;
    });
  }
  json row(RecordRef ref) {
    const Dump& d = job_.dump(ref);
    const Record& r = job_.record(ref);
    const auto dtypes = [&](std::uint32_t list) {
      json out = json::array();
      for (TextId t : d.string_lists[list]) out.push_back(text(ref.dump, t));
      return out;
    };
    return json::array({d.rank, r.index, r.record_id, text(ref.dump, r.pg_name), text(ref.dump, r.pg_desc),
                        r.collective_seq_id, r.p2p_seq_id, r.op_id, text(ref.dump, r.profiling_name),
                        d.shapes[r.input_sizes], dtypes(r.input_dtypes), d.shapes[r.output_sizes],
                        dtypes(r.output_dtypes), static_cast<int>(r.state), r.is_p2p, r.time_created_ns,
                        r.timeout_ms ? json(*r.timeout_ms) : json(nullptr),
                        r.duration_ms && std::isfinite(*r.duration_ms) ? json(*r.duration_ms) : json(nullptr),
                        stack(ref.dump, r.stack), r.frames_dropped});
  }

  const Job& job_;
  std::unordered_map<std::uint64_t, std::uint32_t> index_;
  json rows_ = json::array(), texts_ = json::array(), frames_ = json::array(), stacks_ = json::array();
  std::vector<std::unordered_map<std::uint32_t, std::uint32_t>> texts_of_, frames_of_, stacks_of_;
};

json findings(const std::vector<Finding>& found) {
  json out = json::array();
  for (const Finding& f : found) out.push_back(json::array({finding_kind_names[static_cast<int>(f.kind)], f.text}));
  return out;
}

json divergence(const Divergence& d, Records& records) {
  json recs = json::array();
  for (const auto& [rank, refs] : d.records) recs.push_back(json::array({rank, records.refs(refs)}));
  return {{"group", d.group},
          {"seq", d.seq ? json(*d.seq) : json(nullptr)},
          {"findings", findings(d.findings)},
          {"ranks", d.ranks},
          {"records", std::move(recs)},
          {"other", d.other ? json::array({d.other->first, d.other->second}) : json(nullptr)},
          {"time_ns", d.time_ns ? json(*d.time_ns) : json(nullptr)},
          {"deadlocks", d.deadlocks}};
}

json group(const GroupReport& g, Records& records) {
  json divergent = json::array();
  for (const DivergentSeq& s : g.divergent_seqs) {
    json kinds = json::array();
    for (FindingKind k : s.kinds) kinds.push_back(finding_kind_names[static_cast<int>(k)]);
    divergent.push_back(json::array({s.seq, std::move(kinds), s.ranks}));
  }
  json undecidable = json::array();
  for (const auto& [rank, why] : g.undecidable) undecidable.push_back(json::array({rank, why}));
  return {{"name", g.name},
          {"desc", g.desc},
          {"backends", g.backends},
          {"members", g.members},
          {"dumped", g.dumped},
          {"window", json::array({g.lo, g.hi})},
          {"matched", g.matched},
          {"divergent", g.divergent},
          {"first", g.first ? divergence(*g.first, records) : json(nullptr)},
          {"membership", findings(g.membership)},
          {"undecidable", std::move(undecidable)},
          {"divergent_seqs", std::move(divergent)}};
}

}  // namespace

std::string match_json(const Job& job, const Alignment& alignment, const AgreementReport& report,
                       const ScenarioWindow& window) {
  Records records(job);
  json doc;
  json dumps = json::array();
  for (std::size_t d = 0; d < job.dumps().size(); ++d) {
    const Dump& dump = job.dumps()[d];
    dumps.push_back({{"input", dump.input},
                     {"rank", dump.rank},
                     {"version", dump.version},
                     {"records", dump.records.size()},
                     {"wrapped", static_cast<bool>(alignment.wrapped[d])}});
  }
  doc["dumps"] = std::move(dumps);
  json groups = json::array();
  for (const GroupReport& g : report.groups) groups.push_back(group(g, records));
  doc["groups"] = std::move(groups);
  json inversions = json::array();
  for (const Divergence& d : report.inversions) inversions.push_back(divergence(d, records));
  doc["inversions"] = std::move(inversions);
  doc["p2p_ignored"] = report.p2p_ignored;
  doc["notes"] = report.notes;
  doc["missing_ranks"] = report.missing_ranks;
  json seqs = json::array();
  for (const auto& [lo, hi] : window.seqs) seqs.push_back(json::array({lo, hi}));
  doc["scenario_window"] = std::move(seqs);
  json kept = json::array();
  for (std::uint32_t d = 0; d < window.kept.size(); ++d) {
    json rows = json::array();
    for (std::uint32_t i : window.kept[d]) rows.push_back(records.add({d, i}));
    kept.push_back(std::move(rows));
  }
  doc["kept"] = std::move(kept);
  records.write(doc);
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string match_dumps(const std::vector<std::string>& paths, DumpFormat format, unsigned jobs,
                        const MatchOptions& options) {
  const Job job(load_dumps(paths, format, jobs));
  const Alignment alignment = align(job);
  const AgreementReport report = check(job, alignment, options.kernels);
  const ScenarioWindow window = scenario_window(job, alignment, report, options.window);
  return match_json(job, alignment, report, window);
}

}  // namespace amaxcheck::fr
