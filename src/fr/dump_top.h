#pragma once
/// The top level of a dump (dump.h): field lookup by key, the version check and pg_config.
/// Internal to the validator (dump.cpp); messages name `where` (the file) and the field.

#include <string>
#include <string_view>
#include <vector>

#include "fr/document.h"
#include "fr/dump.h"

namespace amaxcheck::fr {

/// A dict's field by key: null when missing or None (a later duplicate key wins); `id`, when
/// given, receives the value's node.
const Node* lookup(const Document& doc, const Node& dict, std::string_view key, NodeId* id = nullptr);

/// The dump's version text; InputError unless it is 2.x (a string, or a number like 2.4).
std::string check_version(const Document& doc, const Node* version, NodeId id, const std::string& where);

/// pg_config: one group per key (gloo's single '' entry keyed by its name), ranks parsed from
/// PyTorch's "[0, 1]" strings or lists, bounded.
std::vector<ProcessGroup> read_pg_config(const Document& doc, const Node& config, const std::string& where);

}  // namespace amaxcheck::fr
