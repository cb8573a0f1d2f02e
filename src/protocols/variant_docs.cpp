// The framework-variant table behind `amaxcheck protocols` (see variant_docs.h). The releases are
// the behaviour each design notes and public source describe; the verdicts are the tests' (
// tests/protocols/variants_test.cpp, reduce_point_test.cpp, protocol_verdicts_test.cpp).
#include "protocols/variant_docs.h"

namespace amaxcheck {

std::vector<VariantDoc> variant_docs() {
  return {
      {"comm", "separate", "apex's amax reduction on a communicator of its own over the DP ranks", ""},
      {"comm", "shared", "the amax all-reduce on the DP communicator that carries the gradient buckets",
       "collective_mismatch (and deadlock) when the amax / bucket order differs between ranks (--amax-order rank-dependent)"},
      {"wait", "before-copy", "TransformerEngine's async amax reduction, fixed: handle.wait() before the copy-back", ""},
      {"wait", "after-copy", "the TransformerEngine release whose async path waited after the copy-back (seed hazard 1)",
       "data_race between the copy-back and the in-place all-reduce"},
      {"reduce-at", "exit",
       "TransformerEngine's synchronous reduction at fp8_autocast exit (the backward one after the last module to run backward)", ""},
      {"reduce-at", "next-entry", "the forward buffer reduced when the next fp8_autocast is entered", ""},
      {"reduce-at", "first-module",
       "early TransformerEngine: the reduction in the first module's prepare step, the backward one at the end of "
       "_prepare_backward of fp8_meta[\"first_module\"]",
       "replica_divergence / value_mismatch when the forward's first module is --frozen (its backward reduction never "
       "goes out) or an --eval module runs ahead of the first registering one"},
      {"registration", "dynamic",
       "TransformerEngine's per-autocast global buffers (keyed by autocast id), filled by the modules that run in it",
       "collective_mismatch / unjoined_collective when a module runs on part of its amax group (--skip)"},
      {"registration", "static",
       "TransformerEngine 1.x's global buffer, in which every module keeps its slots (a module that did not run leaves 0)", ""},
      {"unrun", "update",
       "static slots updated all together after the reduction (TransformerEngine 1.x's multi-tensor amax_and_scale_update)", ""},
      {"unrun", "keep",
       "static slots, but only the modules that ran copy back and update (the alternative; not known to have shipped)",
       "replica_divergence when a module runs on part of its amax group: the ranks that skipped it lag"},
      {"empty-quantize", "join", "a current-scaling quantizer that joins the amax all-reduce with amax 0 for an empty input", ""},
      {"empty-quantize", "return-early", "a current-scaling quantizer that returns before the all-reduce for an empty input",
       "unjoined_collective / deadlock: its TP peers wait in the all-reduce"},
  };
}

}  // namespace amaxcheck
