#include "scheduler/strategy.h"

namespace amaxcheck::sched {

const char* to_string(ChoiceKind kind) {
  switch (kind) {
    case ChoiceKind::next_action: return "next_action";
  }
  return "?";
}

bool parse_choice_kind(const std::string& text, ChoiceKind& out) {
  if (text == "next_action") {
    out = ChoiceKind::next_action;
    return true;
  }
  return false;
}

}  // namespace amaxcheck::sched
