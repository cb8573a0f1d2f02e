#pragma once
/// The dependence relation partial-order reduction uses, computed from what steps touched.
///
/// Two steps are dependent when the same actor performed them (program order, stream order,
/// a communicator's completion order) or when they touched one object and at least one of them
/// wrote it (the objects are listed with ObjectType in src/engine/engine_state.h). Swapping two
/// adjacent independent steps cannot change the outcome of a run, so schedules that differ
/// only in such swaps form one Mazurkiewicz trace and need to be explored once.
///
/// For that to hold, two steps a and b enabled in one state and independent by this relation
/// must (1) leave the same state in either order, (2) not enable or disable each other, (3)
/// keep their touches (each step's touches depend only on its actor's own state and on objects
/// it touches), and (4) give the detectors the same observations up to what a hazard's key
/// (Hazard::key(): kind and participant ops, not steps) reads. Case by case:
/// - Issue vs execute on one stream. An issue appends at the tail (writes stream_tail) and an
///   execute or join runs the head (writes stream): different objects, and both orders leave
///   the same queue. The one order that matters is an op's issue before its own execute, join
///   and complete, which is what enables them; both write the op's queued_op object, so they
///   are dependent in every schedule. (Marking the head only when the queue was empty would not
///   do: that touch changes when an execute is moved across the issue, breaking (3).) Host
///   synchronization on a stream waits for it to drain and takes its clock, so it reads both
///   stream and stream_tail and is dependent with every step that changes either.
/// - Steps of different ranks touch only their own rank's objects, except that a complete
///   touches every member of its communicator: ranks that share no collective are independent.
///   Within a rank, steps that share no buffer, flag, event, record, stream or collective
///   counter are independent (kernel inputs and outputs are declared per buffer).
/// - Joins of one collective by different members each write only their own rendezvous slot
///   (and their own stream): they commute. The complete writes every member's slot, so it is
///   ordered after every join (which enables it); writing the slots of members that did not
///   join keeps a late join on its side of the completion under complete_without_all_members.
/// - Collective issues on a rank write its comm_issue counter (sequence numbers; the collective
///   detector's order check) and launch_tail (the launch order); a join reads comm_done (the
///   implicit per-communicator edge and its clock) and, under serialized kernels only, the
///   launch order's front (launch_head), which completes write, also under serialized kernels
///   only: under concurrent kernels nothing reads the front, and removing two collectives from
///   the launch order in either order leaves the same list. Appending never changes the front
///   of a list a join is waiting in, so collective issues and joins commute.
/// - Events: a record's issue writes the event (which record it names), a wait's issue and
///   event synchronization read it; the record's execute writes its queued_op (done flag and
///   clock), which the wait's execute and event synchronization read.
/// - Detectors. Vector clocks are computed from state touched as above, so every step's clock
///   is the same in every schedule of a trace. The race detector keeps per-buffer history;
///   accesses to one buffer with a write among them are dependent (buffer objects), and the
///   only history it prunes on a read is the reader's own, so the races it reports are the same
///   set. The collective detector's mismatch check keys on (comm, seq) and records whichever
///   member issued first; only the report's participant order differs, which the hazard key
///   sorts away. Deadlocks, unjoined collectives and values are read from the final state,
///   which is the same for every schedule of a trace. Participants' step numbers differ between
///   schedules and are not part of the key.
///
/// Some dependent pairs can never be reversed: the later step was not enabled until the
/// earlier one wrote (an op's issue before its execute, a record's execute before the wait
/// that waits for it, the joins before their completion (for a send / recv pair, only when no
/// other pair of the communicator is ready: the complete would otherwise have finished that
/// one, before either side joined), a completion before the next join
/// on the communicator, the step that drains a stream before a host synchronization on it).
/// The engine marks those reads with Touch::needs; they stay dependent (happens-before goes
/// through them), but the search does not try to reverse them (see path_clocks.h).

#include <cstdint>
#include <span>

#include "engine/action.h"

namespace amaxcheck::sched {

/// True when some object is touched by both and written by at least one.
bool touches_conflict(std::span<const Touch> a, std::span<const Touch> b);

/// The dependence of two steps, given their actors and touches.
inline bool dependent(std::uint64_t actor_a, std::span<const Touch> a, std::uint64_t actor_b,
                      std::span<const Touch> b) {
  return actor_a == actor_b || touches_conflict(a, b);
}

}  // namespace amaxcheck::sched
