#pragma once
/// The framework variants the knobs select: for each value of a variant knob, what it models,
/// where it shipped, and what amaxcheck reports for it (the hazard kinds of the buggy value; none
/// for the fixed twin). `amaxcheck protocols` prints them and lists them in `--json`; the README's
/// variant table says the same in prose, and tests/protocols/ holds each value to its verdict.

#include <string>
#include <vector>

namespace amaxcheck {

struct VariantDoc {
  std::string knob;     ///< the knob without dashes, e.g. "reduce-at"
  std::string value;    ///< one of its values, e.g. "first-module"
  std::string shipped;  ///< the framework and release(s) that behave this way
  std::string hazard;   ///< the hazard kinds it is reported with ("" when clean), and when
};

/// Every variant value, grouped by knob, the default value first.
std::vector<VariantDoc> variant_docs();

}  // namespace amaxcheck
