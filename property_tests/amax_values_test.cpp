// Properties 1 and 2: amax correctness against the independent sequential reference, and
// replica consistency, on the safe designs under generated configurations and schedules.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property_checks.h"

namespace amaxcheck::props {
namespace {

RC_GTEST_PROP(AmaxCorrectness, every_scale_update_reads_the_group_max_and_writes_what_the_sequential_reference_writes,
              ()) {
  const ProtocolCase c = *safe_case();
  RC_TAG(to_string(c.knobs.protocol));
  check_amax_correctness(c);
}

RC_GTEST_PROP(ReplicaConsistency, ranks_sharing_a_tensor_hold_bit_identical_history_scale_and_scale_inv_after_every_update,
              ()) {
  const ProtocolCase c = *safe_case();
  RC_TAG(to_string(c.knobs.protocol));
  check_replica_consistency(c);
}

}  // namespace
}  // namespace amaxcheck::props
