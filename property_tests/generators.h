#pragma once
/// RapidCheck generators for the property suite: protocol configurations (layouts, knobs,
/// modules, microbatches, iterations, local amax inputs, per-rank module skipping) and
/// schedules (strategy and seed).
///
/// Two families of configurations:
/// - safe designs: te-sync, te-async waiting before the copy-back on a separate communicator
///   in the same order on every rank (without evaluation-mode modules: TE waits only in
///   training modules, so an eval-mode module ahead of them races; an unsafe design below),
///   and current scaling; any --reduce-at (first-module without evaluation-mode modules) and
///   --reduce-at-bwd, and frozen modules (--frozen) where the backward reduction is not tied to
///   the first module (last-backward). Skips are generated per rank but
///   applied to every rank of the skipper's amax group, since a module that registers on some
///   members of a group and not others makes their reductions mismatch (that is an unsafe
///   design of its own, below);
/// - unsafe designs, one generator each, restricted to the configurations where the hazard is
///   certain (so a missing report is a detector bug, not a lucky configuration).
///
/// Amax groups: only the kinds that are correct for the layout (each group exactly the ranks
/// sharing its tensors), so each design shows its own hazard and no other; amax_group_test.cpp
/// checks that every other group is a hazard.
///
/// Layouts: DP 1-16, TP 1-4, PP 1-2 with at most 16 ranks (the suite has to stay fast on two
/// cores; the protocol tests cover 64 ranks), default rank order, CP 1.

#include <cstdint>
#include <ostream>
#include <string>

#include <rapidcheck.h>

#include "protocols/protocol.h"
#include "scheduler/explore.h"

namespace amaxcheck::props {

/// How one run is scheduled: run 0 of `amaxcheck check --strategy K --seed S --depth D`.
struct Schedule {
  std::string strategy = "random";  ///< "random" or "pct"
  std::uint64_t seed = 0;
  std::uint32_t depth = 3;  ///< pct only
};

/// A protocol configuration and the schedule of one run of it.
struct ProtocolCase {
  ProtocolKnobs knobs;
  Schedule schedule;
};

enum class UnsafeDesign : std::uint8_t {
  wait_after_copy,                  ///< te-async: handle.wait() after the copy-back (data race)
  shared_comm_rank_dependent_order, ///< amax and gradients on one comm, order differs (mismatch)
  serialized_rank_dependent_order,  ///< separate comm, order differs, kernels serialized (deadlock)
  skip_on_part_of_a_group,          ///< a module skipped on some members of an amax group (mismatch)
  evaluation_module_first,          ///< te-async: an eval-mode module copies back before the wait (race)
};

const char* to_string(UnsafeDesign design);

/// A float for a tensor element, biased towards the edge cases: +-0, subnormals, +-inf, NaN,
/// FLT_MAX, values around the FP8 maxima, and ordinary binary fractions.
rc::Gen<float> special_float();

rc::Gen<Schedule> schedule();
/// The largest world the generators build by default.
inline constexpr std::uint32_t kMaxWorld = 16;

/// A valid configuration of a safe design with at most `max_world` ranks.
rc::Gen<ProtocolKnobs> safe_knobs(std::uint32_t max_world = kMaxWorld);
/// A valid configuration of `design` in which its hazard is certain (`max_world` >= 4).
rc::Gen<ProtocolKnobs> unsafe_knobs(UnsafeDesign design, std::uint32_t max_world = kMaxWorld);
rc::Gen<ProtocolCase> safe_case(std::uint32_t max_world = kMaxWorld);
rc::Gen<ProtocolCase> unsafe_case(UnsafeDesign design, std::uint32_t max_world = kMaxWorld);
/// Any unsafe design.
rc::Gen<UnsafeDesign> unsafe_design();
/// Whether `kind` is the signature of `design`: the kind its report must contain (the skip
/// design shows as a collective mismatch or an unjoined collective, depending on the sizes).
bool is_signature(UnsafeDesign design, HazardKind kind);

/// The `amaxcheck check` command line that runs exactly this case (protocol, knobs, schedule).
std::string check_command(const ProtocolCase& c);
/// `--strategy K --seed S [--depth D] --runs 1`
std::string schedule_args(const Schedule& s);

/// How RapidCheck prints a case in a counterexample.
void showValue(const ProtocolCase& c, std::ostream& os);
void showValue(const Schedule& s, std::ostream& os);
void showValue(UnsafeDesign design, std::ostream& os);

}  // namespace amaxcheck::props
