#pragma once
/// Per-rank templates of the explicit scenario form (traces/SCENARIO.md, "Templates").
///
/// An entry of `ranks` with a `"for"` list of rank indices is written once and stands for one
/// rank per listed index. Inside it, three forms say what differs between those ranks:
/// - `{rank}`, `{rank+K}`, `{rank-K}`, `{rank^K}` in a string: the rank's index (or a rank
///   computed from it); a string that is only one such expression is that number
///   (`"peer": "{rank^1}"`). `+`, `-` and `^` give a rank, so one outside the scenario is an
///   error, not a silent wrap;
/// - `{"even": A, "odd": B}`: A on even ranks, B on odd ones;
/// - `"only": [ranks]` or `"only": "even"|"odd"` on an element of an array (an op, a buffer, a
///   thread): the element exists on those ranks only.
/// A check's replica with `"for"` stands for one replica per listed rank (its `rank`), with the
/// same three forms. When one entry of `ranks` has `"for"`, every entry has one (a single rank is
/// `"for": [2]`), and together they describe ranks 0..N-1, each once.
///
/// Expansion is plain JSON in, plain JSON out, before anything is read: the expanded document is
/// the explicit form without templates, which is also what the writer writes and the scenario
/// hash covers, so a template and its hand-written expansion are one scenario. Every mistake is
/// an InputError naming the template's field and the rank it was being expanded for.

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "io/json_field.h"
#include "model/scenario_size.h"

namespace amaxcheck {

struct ExpandedRanks {
  bool expanded = false;  ///< whether there was a template (else `doc` is empty: read the original)
  nlohmann::json doc;     ///< the document without templates
  /// Per rank, the path its fields are reported under: "ranks[2]" for a plain entry,
  /// "ranks[0] (for rank 2)" for one expanded from a template.
  std::vector<std::string> rank_paths;
};

/// Expands the templates of an explicit-form document (an object with `ranks`). A document
/// without any `"for"` is not copied (`expanded` is false). `before_expand`, when given, sees an
/// upper bound of the ranks' counts first (expansion_bound) and may throw to refuse them: a
/// small template can stand for more ops than memory holds.
ExpandedRanks expand_templates(const JsonField& doc, const std::function<void(const ScenarioSize&)>& before_expand = {});

}  // namespace amaxcheck
