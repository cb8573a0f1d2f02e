#pragma once
/// The core of each protocol-level property, as a function of one generated case and the
/// engine options. The RC_GTEST_PROPs call them with a correct engine; the mutation test calls
/// them with a planted bug and expects RapidCheck to find a failing case.
///
/// Each check runs the case once (observe()), asserts with RC_ASSERT / RC_FAIL, and on failure
/// first logs the counterexample files and reproduce commands (failure_report.h) with RC_LOG.

#include "generators.h"
#include "observed_run.h"

namespace amaxcheck::props {

/// 1. Every scale update reads a history whose row 0 is the max of the local amaxes over the
///    reduction group, and writes the history, scale and scale_inv of the independent
///    sequential reference: per tensor, per iteration, on every rank.
void check_amax_correctness(const ProtocolCase& c, const EngineOptions& engine = {});

/// 2. Ranks that share a tensor (its amax group, within a pipeline stage) hold bit-identical
///    amax_history, scale and scale_inv after every update, and at the end of the run.
void check_replica_consistency(const ProtocolCase& c, const EngineOptions& engine = {});

/// 3a. A safe design finishes with no hazard of any kind.
void check_safe_design_is_clean(const ProtocolCase& c, const EngineOptions& engine = {});

/// 3a'. A small safe configuration (two ranks, one iteration) is clean in every schedule the
///      exhaustive search (DPOR) explores, up to `max_schedules`.
void check_safe_design_is_clean_exhaustively(const ProtocolKnobs& knobs, std::uint64_t max_schedules,
                                             const EngineOptions& engine = {});

/// 3b. An unsafe design is reported with its hazard kind, only kinds it can cause, and a
///     report that names the right participants.
void check_unsafe_design_is_reported(UnsafeDesign design, const ProtocolCase& c, const EngineOptions& engine = {});

}  // namespace amaxcheck::props
