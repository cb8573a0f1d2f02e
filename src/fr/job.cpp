// Interning every dump's tables into job-wide ids (job.h). The tables are small (a dump's
// distinct strings and shapes), so this costs little next to reading the records.
#include "fr/job.h"

#include <map>
#include <unordered_map>

namespace amaxcheck::fr {

Job::Job(std::vector<Dump> dumps) : dumps_(std::move(dumps)) {
  std::unordered_map<std::string, std::uint32_t> text_index;
  std::map<std::vector<Shape>, std::uint32_t> shape_index;
  std::map<std::vector<std::uint32_t>, std::uint32_t> list_index;
  const auto intern_text = [&](const std::string& s) {
    const auto [it, fresh] = text_index.emplace(s, static_cast<std::uint32_t>(texts_.size()));
    if (fresh) texts_.push_back(s);
    return it->second;
  };
  for (const Dump& d : dumps_) {
    auto& texts = text_ids_.emplace_back();
    texts.reserve(d.texts.size());
    for (const std::string& s : d.texts) texts.push_back(intern_text(s));
    auto& shapes = shape_ids_.emplace_back();
    for (const auto& s : d.shapes) {
      shapes.push_back(shape_index.emplace(s, static_cast<std::uint32_t>(shape_index.size())).first->second);
    }
    auto& lists = list_ids_.emplace_back();
    for (const auto& l : d.string_lists) {
      std::vector<std::uint32_t> ids;
      ids.reserve(l.size());
      for (TextId t : l) ids.push_back(texts[t]);
      lists.push_back(list_index.emplace(std::move(ids), static_cast<std::uint32_t>(list_index.size())).first->second);
    }
  }
  // Every text's op and backend: 'nccl:all_reduce' -> 'all_reduce' and 'nccl'.
  const std::size_t n = texts_.size();
  op_of_.resize(n);
  backend_of_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = texts_[i];  // a copy: interning may grow texts_
    const std::size_t colon = name.find(':');
    op_of_[i] = colon == std::string::npos ? static_cast<std::uint32_t>(i) : intern_text(name.substr(colon + 1));
    backend_of_[i] = colon == std::string::npos ? intern_text("") : intern_text(name.substr(0, colon));
  }
  compared_.assign(texts_.size(), Compared::both);
  for (std::size_t i = 0; i < texts_.size(); ++i) {
    const std::string& t = texts_[i];
    if (t.find("all_to_all") != std::string::npos || t.find("alltoall") != std::string::npos) {
      compared_[i] = Compared::no_sizes;
    } else if (t == "gather") {
      compared_[i] = Compared::inputs_only;
    } else if (t == "scatter") {
      compared_[i] = Compared::outputs_only;
    }
  }
}

Signature Job::signature(RecordRef ref) const {
  const Record& r = record(ref);
  const auto& texts = text_ids_[ref.dump];
  const auto& shapes = shape_ids_[ref.dump];
  const auto& lists = list_ids_[ref.dump];
  const std::uint32_t name = texts[r.profiling_name];
  return {name, op_of_[name], shapes[r.input_sizes], shapes[r.output_sizes], lists[r.input_dtypes],
          lists[r.output_dtypes], r.state};
}

std::string_view Job::backend(RecordRef ref) const {
  return texts_[backend_of_[text_ids_[ref.dump][record(ref).profiling_name]]];
}

}  // namespace amaxcheck::fr
