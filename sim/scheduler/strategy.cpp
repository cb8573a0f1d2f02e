#include "scheduler/strategy.h"

namespace amaxcheck::sched {

const char* to_string(ChoiceKind kind) { return enum_name(kind); }

bool parse_choice_kind(const std::string& text, ChoiceKind& out) {
  const auto kind = parse_enum<ChoiceKind>(text);
  if (kind) out = *kind;
  return kind.has_value();
}

}  // namespace amaxcheck::sched
