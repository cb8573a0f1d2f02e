#pragma once
/// A GPU session: one scenario set up on this process's GPUs, ready to replay schedules.
///
/// Internal to the backend (gpu_run.h is the public face); the benchmarks use it directly to
/// replay the same scenario many times without paying for set-up each time.
///
/// Replay semantics, step by step (the engine's actions, engine/action.h):
/// - issue (rank, thread): host ops wait (under the watchdog) for what they block on; event
///   ops are queued as they are; kernels and collectives are queued behind their gate, followed
///   by a completion event;
/// - execute (rank, stream): the head op's gate is released and, with gates on, its completion
///   is awaited, so device work happens one step at a time, in the schedule's order;
/// - join (rank, stream): only recorded, as the collective reads nothing until every member
///   is there;
/// - complete (comm): every member's gate is released and the collective awaited; it reads its
///   inputs and writes its outputs at this step, exactly where the simulator does.
/// Steps for ranks of other processes are skipped; cross-process order comes from the
/// collectives themselves.
///
/// When a wait passes its deadline: ncclCommAbort on every communicator, every gate released,
/// a short drain, and the result lists every op that had not finished. A device that does not
/// drain even then is left alone (its memory is not freed, so nothing blocks on it).

#include <deque>
#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <vector>

#include "cuda/communicators.h"
#include "cuda/gate_bank.h"
#include "cuda/gpu_run.h"
#include "cuda/placement.h"
#include "cuda/rank_resources.h"
#include "cuda/watchdog.h"

namespace amaxcheck::gpu {

struct DeviceProbe;

/// What placement needs to know about this process: the devices `probe` found, the loaded
/// NCCL, and, in a multi-process launch (`exchange` set), the launcher's variables, which must
/// agree with the exchange (else InputError).
PlacementInput placement_input_here(const DeviceProbe& probe, const IdExchange* exchange);

class Session {
 public:
  /// Probes the devices, places the ranks, creates every resource and communicator. Throws
  /// InputError when no device is usable or the scenario does not fit.
  Session(const Scenario& scenario, const GpuRunOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Placement& placement() const { return placement_; }
  int nccl_version() const { return nccl_version_; }
  const Scenario& scenario() const { return scenario_; }
  bool is_local(RankId rank) const;
  RankResources& resources(RankId rank);
  ncclComm_t comm(CommId comm, RankId rank) const { return comms_.handle(comm, rank); }
  const Watchdog& watchdog() const { return *watchdog_; }

  /// nccl-tests-style data check of every collective signature the scenario uses.
  void data_check(GpuRunResult& result);
  /// Replays `schedule` from the initial state. Fills the replay fields of `result`.
  void replay(const std::vector<Step>& schedule, GpuRunResult& result);
  /// Final values of every ReplicaCheck (every process gets all of them).
  std::vector<CheckValues> read_checks();
  /// Initial values back and gates closed, for another replay.
  void reset();

 private:
  struct IssuedOp {
    OpRef ref;
    const Op* op = nullptr;
    int gate = -1;
    bool released = false;
    bool joined = false;
    std::uint64_t seq = 0;  ///< collectives: index on the comm; p2p: pair index (as the engine's)
  };
  struct ReplayState {
    std::map<std::pair<RankId, StreamId>, std::deque<IssuedOp>> queues;
    /// Per thread: the ops of a send/recv group issued so far, queued at its last op.
    std::map<std::pair<RankId, ThreadId>, std::vector<IssuedOp>> held;
    std::map<std::pair<RankId, ThreadId>, std::uint32_t> pcs;
    std::map<std::pair<RankId, CommId>, std::uint64_t> comm_issued;
    std::map<CommId, std::uint64_t> comm_completed;
    std::map<int, std::uint32_t> queued_on_gpu;  ///< issued device ops not yet executed
    /// p2p ops issued per (rank, comm, peer rank, is a send): the next op's pair index.
    std::map<std::tuple<RankId, CommId, RankId, bool>, std::uint64_t> p2p_issued;
  };
  /// Removes the head of a stream's queue (and counts it off its GPU).
  void pop_head(ReplayState& state, RankId rank, std::deque<IssuedOp>& queue);

  // Replay, one function per action kind (replayer.cpp).
  void replay_step(const Step& step, ReplayState& state);
  void issue(const Step& step, ReplayState& state);
  void execute(const Step& step, ReplayState& state);
  void join(const Step& step, ReplayState& state);
  void complete(const Step& step, ReplayState& state);
  void run_host_op(RankId rank, const Op& op);
  void launch(RankId rank, const IssuedOp& issued);
  void launch_collective(RankId rank, const Op& op);
  /// The gate in front of an op, if it has one.
  void launch_gate_of(const IssuedOp& issued, cudaStream_t stream);
  /// Sends and receives of one ncclGroup (or one alone), launched once the last is issued.
  void launch_p2p(RankId rank, const std::vector<const IssuedOp*>& ops);
  /// p2p: the pair's two sides (those local to this process) are released; a stream's head
  /// group leaves once every op of it was released.
  void complete_p2p(const Step& step, ReplayState& state);
  void settle_p2p(ReplayState& state, RankId rank, std::deque<IssuedOp>& queue);
  void wait_done(RankId rank, const IssuedOp& issued, const std::function<std::string()>& why);
  /// "stream compute" for hang reports.
  std::string lane_of(RankId rank, const IssuedOp& issued) const;
  /// After a HangDetected: abort, release, drain, and describe what was stuck.
  void handle_hang(const std::string& reason, ReplayState& state, GpuRunResult& result);
  /// Releases what the schedule left gated (a simulated deadlock) and sees whether it drains.
  void probe_leftovers(ReplayState& state, GpuRunResult& result);
  void make_ready_to_call(ncclComm_t comm);

  Scenario scenario_;
  GpuRunOptions options_;
  Placement placement_;
  int nccl_version_ = 0;
  std::unique_ptr<Watchdog> watchdog_;
  std::map<RankId, RankResources> ranks_;
  std::unique_ptr<GateBank> gates_;
  std::map<RankId, std::vector<std::vector<int>>> gate_of_;  ///< [rank][thread][index]
  Communicators comms_;
  std::map<ncclComm_t, bool> in_progress_;  ///< a non-blocking call not yet confirmed
  bool aborted_ = false;
  bool device_healthy_ = true;
};

}  // namespace amaxcheck::gpu
