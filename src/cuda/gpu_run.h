#pragma once
/// The CUDA + NCCL backend's public API: run a scenario on real GPUs, in the order a simulator
/// run chose, and hand back what the simulator's oracle needs to compare.
///
/// How a run goes (details in session.h):
/// 1. placement: which device each rank uses (placement.h); a scenario that does not fit is an
///    InputError naming what is missing;
/// 2. set-up, one host thread per local GPU: streams, events, buffers with their initial
///    values, and one non-blocking NCCL communicator per scenario communicator and member
///    (a communicator over the same ranks as an earlier one is made with ncclCommSplit, with or
///    without shared resources, or by a fresh init: GpuRunOptions::derived_comms);
/// 3. data check: every communicator runs each collective signature the scenario uses once,
///    with values predictable by construction, and the results are checked (nccl-tests'
///    #wrong); this also makes NCCL connect before the replay;
/// 4. replay of the schedule: an `issue` step queues the op on its stream behind a gate kernel;
///    `execute` releases that op's gate and waits for it; `join` only marks; `complete`
///    releases every member's gate and waits for the collective, so a collective reads and
///    writes at the point the simulator's `complete` does;
/// 5. read-back of every ReplicaCheck range (under MPI, once every process has said whether its
///    replay hung: a hang in any process is a hang in all of them, and none reads back).
///
/// Nothing waits without a deadline. When one passes, every communicator is aborted, every gate
/// released, and the result names the ranks and ops that were stuck (a "hang").
///
/// This header needs no CUDA headers, so the CLI can include it in any build; the functions
/// exist only when the library was built with CUDA (AMAXCHECK_HAVE_CUDA=1).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "detectors/hazard.h"
#include "engine/engine.h"
#include "model/scenario.h"

namespace amaxcheck::gpu {

class IdExchange;

/// How a communicator over the same ranks as an earlier one (e.g. a separate amax
/// communicator next to the DP one) is made. This decides its device memory.
enum class CommCreation : std::uint8_t {
  split_shared,    ///< ncclCommSplit with splitShare=1: shares the parent's buffers
  split_unshared,  ///< ncclCommSplit with splitShare=0: its own buffers
  fresh_init,      ///< ncclCommInitRankConfig from its own unique id
};
}  // namespace amaxcheck::gpu

namespace amaxcheck {
/// The --comm-creation spellings.
template <>
struct EnumNames<gpu::CommCreation> {
  static constexpr std::array table{
      EnumName<gpu::CommCreation>{gpu::CommCreation::split_shared, "split-shared"},
      EnumName<gpu::CommCreation>{gpu::CommCreation::split_unshared, "split"},
      EnumName<gpu::CommCreation>{gpu::CommCreation::fresh_init, "fresh-init"}};
};
}  // namespace amaxcheck

namespace amaxcheck::gpu {

const char* to_string(CommCreation creation);

struct GpuRunOptions {
  /// Not split_shared: communicators that share resources share NCCL's internal device stream,
  /// so their kernels run in host issue order, one behind the other. A separate communicator is
  /// the simulator's (and PyTorch's new_group's) communicator with resources of its own.
  CommCreation derived_comms = CommCreation::split_unshared;
  /// Gates on: device order follows the schedule exactly. Off: ops run as soon as CUDA lets
  /// them, and execute / complete steps do not wait (benchmarks only; values may differ).
  bool gates = true;
  std::uint32_t op_timeout_ms = 10000;   ///< longest wait for one step (the watchdog)
  std::uint32_t run_timeout_ms = 240000; ///< the whole run
  std::uint32_t gate_timeout_ms = 300000;  ///< a gate gives up on its own after this
  /// Most ops issued but not yet executed on one GPU. Each is queued behind a closed gate, and
  /// CUDA's launch queue is finite: once it is full a launch blocks the host, the gate ahead
  /// never opens, and the watchdog cannot interrupt the blocked launch (an H200 run hung at
  /// 2000 queued all-reduces; 400 ran). A schedule that queues more is refused (InputError).
  std::uint32_t max_queued_ops_per_gpu = 256;
  bool data_check = true;
  /// The launch's processes; nullptr runs every rank in this process.
  IdExchange* exchange = nullptr;
};

struct ReplicaValues {
  RankId rank = 0;
  Range range;
  std::vector<float> values;
};

/// The final values of one ReplicaCheck on every replica, in the scenario's order. Under MPI
/// every process receives every replica's values.
struct CheckValues {
  std::string tensor;
  std::vector<ReplicaValues> replicas;
};

/// An op that had not finished when the watchdog fired.
struct StuckGpuOp {
  RankId rank = 0;
  std::string lane;  ///< "stream compute"
  OpRef op;
  std::string op_name;
  std::string origin;
  std::string state;  ///< "gated (never released)", "released, not finished", ...
};

struct GpuRunResult {
  std::string nccl_version;  ///< run-time library, e.g. "2.28.9"
  std::string placement;     ///< the placement decision, one line
  std::vector<CheckValues> checks;
  std::size_t steps_replayed = 0;
  std::size_t data_check_wrong = 0;  ///< wrong elements in the built-in data check
  std::vector<std::string> data_check_failures;
  bool hang = false;
  std::string hang_reason;  ///< what the watchdog was waiting for
  std::vector<StuckGpuOp> stuck;
  bool gate_timed_out = false;  ///< a gate gave up: device order no longer follows the schedule
  bool simulator_was_stuck = false;  ///< the schedule left work behind (a simulated deadlock)
  /// A CUDA or NCCL call failed during the replay (the run was then cleaned up as after a
  /// hang): a device error, not a verdict on the scenario.
  std::string device_error;
  std::vector<std::string> notes;
  double setup_ms = 0;
  double replay_ms = 0;
};

/// "no usable CUDA device: <the driver's reason>" when CUDA cannot be used here, else nullopt.
/// Also says so when the library was built without CUDA.
std::optional<std::string> cuda_unavailable_reason();

/// The program a run on this machine executes. The scenario as written when it fits (see
/// placement.h); in a single process whose communicators would put two members on one GPU
/// (NCCL without several ranks per GPU), its 1-rank-communicator variant: collectives become
/// local copies, but stream and event races stay real. The caller simulates `scenario` too, so
/// both backends run the same program.
struct FittedScenario {
  Scenario scenario;
  bool one_rank_comms = false;  ///< the variant, not the scenario as written
  std::string note;             ///< the placement decision and, for the variant, why
};

/// Throws InputError when no device is usable, or when a multi-process launch does not fit
/// (there, each process sees only its own node and cannot rewrite the others' programs).
FittedScenario fit_to_this_machine(const Scenario& scenario, const IdExchange* exchange = nullptr);

/// Runs `schedule` (the Steps of a simulator run of `scenario`) on this machine's GPUs.
/// Throws InputError when no device is usable, when the scenario does not fit (see
/// placement.h), or when the schedule does not belong to the scenario ("replay diverged at
/// step N"). A hang is a result, not an exception.
GpuRunResult run_on_gpus(const Scenario& scenario, const std::vector<Step>& schedule,
                         const GpuRunOptions& options = {});

/// The hang as a hazard report: kind deadlock (HazardKind has no separate hang kind), summary
/// "hang on GPU: ...", one participant per stuck op.
Hazard hang_hazard(const GpuRunResult& result);

}  // namespace amaxcheck::gpu
