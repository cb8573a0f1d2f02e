#pragma once
/// One non-blocking NCCL communicator per scenario communicator and local member.
///
/// A communicator whose members all belong to an earlier one (the separate amax communicator
/// next to the DP one, say) is derived from it as CommCreation says: ncclCommSplit with or
/// without shared resources, or a fresh ncclCommInitRankConfig. Every other communicator is a
/// fresh init from its own unique id (bootstrap.h). NCCL rank = member index.
///
/// Set-up runs one host thread per local GPU, as single-process NCCL programs do; each thread
/// creates the communicators of its device's ranks in scenario order and polls them to
/// readiness under the watchdog.

#include <nccl.h>

#include <vector>

#include "cuda/bootstrap.h"
#include "cuda/gpu_run.h"
#include "cuda/placement.h"
#include "model/scenario.h"

namespace amaxcheck::gpu {

class Watchdog;

/// The earlier communicator `comm` can be split from (every member of `comm` is one of its
/// members), or -1.
int split_parent(const Scenario& scenario, CommId comm);

class Communicators {
 public:
  Communicators() = default;
  ~Communicators();
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  void create(const Scenario& scenario, const Placement& placement, const std::vector<UniqueIdBytes>& ids,
              CommCreation derived, const Watchdog& watchdog);

  /// The handle of `rank` on `comm`; nullptr when the rank is not local or not a member.
  ncclComm_t handle(CommId comm, RankId rank) const;
  std::vector<ncclComm_t> all() const;

  /// Finalizes and destroys every communicator, polling under the watchdog; aborts on timeout.
  void destroy(const Watchdog& watchdog);
  /// ncclCommAbort on every communicator (the watchdog's last resort). Idempotent.
  void abort_all();

 private:
  const Scenario* scenario_ = nullptr;
  std::vector<std::vector<ncclComm_t>> handles_;  ///< [comm][member]
};

}  // namespace amaxcheck::gpu
