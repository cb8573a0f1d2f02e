#pragma once
/// Cross-group order inversions (agreement.h has the per-group matching).
///
/// Two ranks that issue the collectives of two shared groups in a different relative order
/// deadlock when collective kernels are serialized: NCCL < 2.26 runs one communicator's kernel
/// at a time per device. gloo runs each group on its own threads, so there an inversion is a
/// note. The rule follows each group's backend (Kernels::auto_detect) unless the user forces
/// `serialized` or `concurrent`.
///
/// For each pair of groups that two or more ranks recorded (the pairs are found from each rank's
/// groups, so groups that share no rank cost nothing), the first collective of the later group
/// whose position relative to the earlier group's collectives differs between ranks. Linear in
/// the records of the ranks the pair shares.

#include <vector>

#include "fr/agreement.h"

namespace amaxcheck::fr {

/// The first inversion of each pair of groups (earlier group, later group) in Alignment order,
/// each with `deadlocks` set by inversion_deadlocks.
std::vector<Divergence> find_inversions(const Job& job, const Alignment& alignment, Kernels kernels);

/// Whether an inversion between `a` and `b` deadlocks under `kernels`: serialized and concurrent
/// are the user's word; auto serializes NCCL groups only.
bool inversion_deadlocks(const GroupRecords& a, const GroupRecords& b, Kernels kernels);

}  // namespace amaxcheck::fr
