#include "fr/aspects.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "fr/show.h"

namespace amaxcheck::fr {
namespace {

/// The aspects matched records must agree on, each as an integer per record.
std::uint64_t aspect_key(const Job& job, Aspect aspect, RecordRef ref) {
  const Signature s = job.signature(ref);
  const Job::Compared compared = job.compared(ref);
  // A side the peers need not agree on counts as empty (0) on every rank.
  const bool inputs = compared != Job::Compared::outputs_only, outputs = compared != Job::Compared::inputs_only;
  const auto sides = [&](std::uint32_t in, std::uint32_t out) {
    return (std::uint64_t{inputs ? in : 0} << 32) | (outputs ? out : 0);
  };
  switch (aspect) {
    case Aspect::operations: return s.op;
    case Aspect::sizes:
      return compared == Job::Compared::no_sizes ? std::numeric_limits<std::uint64_t>::max()
                                                 : sides(s.input_sizes, s.output_sizes);
    case Aspect::dtypes: return sides(s.input_dtypes, s.output_dtypes);
    case Aspect::states: return static_cast<std::uint64_t>(s.state);
  }
  return 0;
}

std::string join_dtypes(const Dump& d, std::uint32_t list) {
  std::string out;
  const auto& names = d.string_lists[list];
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? "/" : "") + d.texts[names[i]];
  return out.empty() ? "?" : out;
}

/// One rank's records in one aspect, as the finding shows them.
std::string show(const Job& job, Aspect aspect, const Refs& refs) {
  std::string out;
  for (const RecordRef& ref : refs) {
    const Dump& d = job.dump(ref);
    const Record& r = job.record(ref);
    if (!out.empty()) out += " + ";
    switch (aspect) {
      case Aspect::operations: out += job.text(job.signature(ref).op); break;
      case Aspect::sizes:
        out += fmt::format("in {} out {}", python_list(d.shapes[r.input_sizes]), python_list(d.shapes[r.output_sizes]));
        break;
      case Aspect::dtypes:
        out += fmt::format("in {} out {}", join_dtypes(d, r.input_dtypes), join_dtypes(d, r.output_dtypes));
        break;
      case Aspect::states: out += state_names[static_cast<int>(r.state)]; break;
    }
  }
  return cut(out);
}

const char* label_of(Aspect a) {
  switch (a) {
    case Aspect::operations: return "operations";
    case Aspect::sizes: return "sizes";
    case Aspect::dtypes: return "dtypes";
    case Aspect::states: return "states";
  }
  return "";
}

}  // namespace

FindingKind kind_of(Aspect a) {
  switch (a) {
    case Aspect::operations: return FindingKind::type_mismatch;
    case Aspect::sizes: return FindingKind::size_mismatch;
    case Aspect::dtypes: return FindingKind::dtype_mismatch;
    case Aspect::states: return FindingKind::state_mismatch;
  }
  return FindingKind::type_mismatch;
}
/// The ranks outside the largest agreeing block in `aspect` (all of them on a tie); with `text`,
/// the finding that names every block.
std::vector<std::int64_t> deviants(const Job& job, Aspect aspect, const std::vector<Have>& have, std::string* text) {
  std::map<std::vector<std::uint64_t>, std::vector<std::int64_t>> by_key;
  std::vector<std::uint64_t> key;
  for (const Have& h : have) {
    key.clear();
    for (const RecordRef& ref : h.records) key.push_back(aspect_key(job, aspect, ref));
    by_key[key].push_back(h.rank);
  }
  if (by_key.size() <= 1) return {};
  std::vector<const std::vector<std::int64_t>*> blocks;  // by first rank; have runs in rank order
  for (const auto& [k, ranks] : by_key) blocks.push_back(&ranks);
  std::sort(blocks.begin(), blocks.end(), [](auto* a, auto* b) { return a->front() < b->front(); });
  std::vector<std::size_t> sizes;
  for (auto* b : blocks) sizes.push_back(b->size());
  std::sort(sizes.rbegin(), sizes.rend());
  std::vector<std::int64_t> odd;
  if (sizes[0] == sizes[1]) {
    for (const Have& h : have) odd.push_back(h.rank);
  } else {
    const auto* majority = *std::max_element(blocks.begin(), blocks.end(), [](auto* a, auto* b) { return a->size() < b->size(); });
    for (auto* b : blocks) {
      if (b != majority) odd.insert(odd.end(), b->begin(), b->end());
    }
    std::sort(odd.begin(), odd.end());
  }
  if (text) {
    std::unordered_map<std::int64_t, const Refs*> records_of;
    for (const Have& h : have) records_of.emplace(h.rank, &h.records);
    *text = fmt::format("{} differ: ", label_of(aspect));
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const auto& b = *blocks[i];
      *text += fmt::format("{}rank{} {}: {}", i ? "; " : "", b.size() > 1 ? "s" : "", ranks_text(b),
                           show(job, aspect, *records_of.at(b.front())));
    }
  }
  return odd;
}

/// Every rank's records equal in every aspect compared (the profiling name in full): the common
/// case, checked with one comparison per rank.
bool all_alike(const Job& job, const std::vector<Have>& have, bool states) {
  const auto sig = [&](RecordRef ref) {
    Signature s = job.signature(ref);
    if (!states) s.state = State::scheduled;
    return s;
  };
  std::vector<Signature> first;
  for (const RecordRef& ref : have.front().records) first.push_back(sig(ref));
  for (std::size_t i = 1; i < have.size(); ++i) {
    const Refs& other = have[i].records;
    if (other.size() != first.size()) return false;
    for (std::size_t k = 0; k < first.size(); ++k) {
      if (!(sig(other[k]) == first[k])) return false;
    }
  }
  return true;
}

}  // namespace amaxcheck::fr
