#pragma once
/// A scenario transform: every communicator cut into 1-rank communicators.
///
/// The program a GPU run executes when two members of a communicator would share a GPU
/// (src/cuda/placement.h), and what `amaxcheck check --one-rank-comms` simulates, so both
/// backends run the same program. Collectives become local, stream and event races stay real.

#include "model/scenario.h"

namespace amaxcheck {

/// The same scenario with every communicator of m > 1 members replaced by m 1-rank
/// communicators ("<name>@<rank name>"); collectives keep their ranges (a 1-rank all-gather
/// writes only its own slice, as NCCL does) and broadcast roots become 0. Every ReplicaCheck
/// becomes one check per replica without expected values ("<tensor>@<rank name>"): replicas
/// no longer agree once collectives are local, but each is still compared across backends.
Scenario split_communicators_per_rank(const Scenario& scenario);

}  // namespace amaxcheck
