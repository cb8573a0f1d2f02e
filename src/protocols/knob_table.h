#pragma once
/// The knob table behind protocol.h's knob functions (internal to src/protocols).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "protocols/protocol.h"

namespace amaxcheck {

struct KnobEntry {
  KnobDoc doc;
  /// Parses `value` into the knobs; returns what was expected on failure.
  std::function<std::optional<std::string>(ProtocolKnobs&, const std::string&)> set;
  /// The current value(s) as text (several for a repeatable knob, none when it is empty).
  std::function<std::vector<std::string>(const ProtocolKnobs&)> show;
};

const std::vector<KnobEntry>& knob_table();
/// The entry named `name` (without dashes), or nullptr.
const KnobEntry* find_knob(const std::string& name);

}  // namespace amaxcheck
