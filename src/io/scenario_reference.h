#pragma once
/// `"expected": "reference"` in an explicit-form check: the sequential reference's answer.
///
/// The reference is the program run with every op finished before its thread issues the next
/// (CUDA_LAUNCH_BLOCKING with blocking NCCL calls): a kernel runs at once, a collective or a
/// send / recv returns once every member has reached it, and the ranks take turns in index
/// order. Streams, events and waits then order nothing that is not already ordered, so no
/// race can happen and every collective sees its inputs in their final state: the values the
/// design means, whatever its asynchronous mechanism does. A send / recv group is issued whole
/// before it blocks, as ncclGroupEnd does.
///
/// It is refused (InputError at the check's `expected`) when it cannot give one answer:
/// - the program has no scale_update op (the reference is for the standard delayed-scaling
///   ops: local amax, amax all-reduce, copy-back, amax_and_scale_update);
/// - the sequential run itself cannot finish (mismatched or missing collectives, a recv with
///   no send, a host wait never signalled): the message says where it stopped;
/// - the check's replicas end different in the sequential run (the program computes different
///   values on purpose, so there is no single expected value to take).

#include <string>

#include "model/scenario.h"

namespace amaxcheck {

/// Fills `expected` of every check with `expected_reference`. `where` names the file.
void compute_reference_expectations(Scenario& scenario, const std::string& where);

}  // namespace amaxcheck
