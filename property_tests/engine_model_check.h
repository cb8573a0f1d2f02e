#pragma once
/// Property 5, the model-based test of the engine: random small programs (fills, copies,
/// local amaxes, scale updates, event records and waits, work waits, stream / event / device
/// synchronization, host signals and waits, all-reduces, sends and recvs (alone or in an
/// ncclGroup) on two communicators, some of them matched across the ranks in one order,
/// serialized or concurrent kernels), then a random sequence of scheduler actions (issue an op,
/// execute or join a stream's head, complete a collective or a send / recv pair, or run on by
/// random picks until nothing is enabled) run with rc::state against the engine (the system
/// under test) and StreamModel (the model). Before and after every action both must enable
/// exactly the same actions, hold bit-identical buffers and agree on being done.

#include <rapidcheck.h>

#include "engine/engine.h"
#include "model/scenario.h"

namespace amaxcheck::props {

/// The shape of a generated program.
struct ProgramShape {
  StreamId streams = 2;  ///< per rank, at least 2; ops use the last two
  RankId min_ranks = 2, max_ranks = 3;
};

/// Ranks as `shape` says, with 1-2 threads each, up to 8 ops per thread.
rc::Gen<Scenario> small_program(ProgramShape shape = {});

/// Generates a program and an action sequence and checks the engine against the model.
void check_engine_against_model(const EngineOptions& engine = {}, ProgramShape shape = {});

/// A max all-reduce of signed zeros gives the same bits whichever member holds which zero.
void check_max_all_reduce_zero_is_order_independent(const EngineOptions& engine = {});

}  // namespace amaxcheck::props
