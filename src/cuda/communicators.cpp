#include "cuda/communicators.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <thread>

#include "cuda/compat.h"
#include "cuda/cuda_error.h"
#include "cuda/watchdog.h"

namespace amaxcheck::gpu {
namespace {

static_assert(sizeof(ncclUniqueId) == unique_id_bytes, "NCCL_UNIQUE_ID_BYTES changed");
static_assert(several_ranks_per_gpu_min_nccl == compat::multi_rank_gpu_min_version,
              "placement.h and compat.h disagree on the first NCCL with several ranks per GPU");

bool ready(ncclComm_t comm) {
  ncclResult_t state = ncclSuccess;
  nccl_check(ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError", false);
  if (state == ncclInProgress) return false;
  nccl_check(state, "communicator set-up", false);
  return true;
}

/// Creates communicator `c` for the members whose rank sits on `device`.
void create_on_device(const Scenario& scenario, const Placement& placement, CommId c, int device,
                      const std::vector<UniqueIdBytes>& ids, CommCreation derived,
                      std::vector<std::vector<ncclComm_t>>& handles, const Watchdog& watchdog) {
  const Communicator& comm = scenario.comms[c];
  const int parent = derived == CommCreation::fresh_init ? -1 : split_parent(scenario, c);
  const std::string name = fmt::format("amaxcheck {}", comm.name);
  ncclConfig_t config = compat::communicator_config(derived == CommCreation::split_shared, name.c_str());
  auto on_device = [&](RankId r) { return placement.device_of_rank.at(r) == device; };
  std::vector<ncclComm_t> waiting;

  nccl_check(ncclGroupStart(), "ncclGroupStart");
  if (parent < 0) {
    ncclUniqueId id;
    std::memcpy(&id, ids.at(c).data(), unique_id_bytes);
    for (std::size_t m = 0; m < comm.members.size(); ++m) {
      if (!on_device(comm.members[m])) continue;
      nccl_check(ncclCommInitRankConfig(&handles[c][m], static_cast<int>(comm.members.size()), id,
                                        static_cast<int>(m), &config),
                 fmt::format("ncclCommInitRankConfig for comm {} member {}", comm.name, m));
    }
  } else {
    const Communicator& from = scenario.comms[static_cast<std::size_t>(parent)];
    for (std::size_t p = 0; p < from.members.size(); ++p) {
      const RankId r = from.members[p];
      if (!on_device(r)) continue;
      const int member = member_index(comm, r);
      ncclComm_t* out = member >= 0 ? &handles[c][static_cast<std::size_t>(member)] : nullptr;
      ncclComm_t discarded = nullptr;
      nccl_check(ncclCommSplit(handles[static_cast<std::size_t>(parent)][p],
                               member >= 0 ? 0 : compat::split_no_color, std::max(member, 0),
                               out != nullptr ? out : &discarded, &config),
                 fmt::format("ncclCommSplit of {} from {}", comm.name, from.name));
      waiting.push_back(handles[static_cast<std::size_t>(parent)][p]);
    }
  }
  nccl_check(ncclGroupEnd(), "ncclGroupEnd (communicator set-up)");
  for (std::size_t m = 0; m < comm.members.size(); ++m) {
    if (on_device(comm.members[m]) && handles[c][m] != nullptr) waiting.push_back(handles[c][m]);
  }
  for (ncclComm_t h : waiting) {
    watchdog.wait(fmt::format("creating communicator {} on GPU {}", comm.name, device), [h] { return ready(h); });
  }
}

}  // namespace

int split_parent(const Scenario& scenario, CommId comm) {
  const auto& members = scenario.comms.at(comm).members;
  for (CommId p = 0; p < comm; ++p) {
    const auto& candidate = scenario.comms[p].members;
    const bool covers = std::all_of(members.begin(), members.end(), [&](RankId r) {
      return std::find(candidate.begin(), candidate.end(), r) != candidate.end();
    });
    if (covers) return static_cast<int>(p);
  }
  return -1;
}

Communicators::~Communicators() { abort_all(); }

void Communicators::create(const Scenario& scenario, const Placement& placement,
                           const std::vector<UniqueIdBytes>& ids, CommCreation derived, const Watchdog& watchdog) {
  scenario_ = &scenario;
  handles_.assign(scenario.comms.size(), {});
  for (CommId c = 0; c < scenario.comms.size(); ++c) handles_[c].assign(scenario.comms[c].members.size(), nullptr);
  std::vector<int> devices;
  for (RankId r : placement.local_ranks) devices.push_back(placement.device_of_rank.at(r));
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());

  // One thread per local GPU, each walking the communicators in the same order.
  std::vector<std::exception_ptr> failures(devices.size());
  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    threads.emplace_back([&, d] {
      try {
        cuda_check(cudaSetDevice(devices[d]), "selecting a device for communicator set-up");
        for (CommId c = 0; c < scenario.comms.size(); ++c) {
          create_on_device(scenario, placement, c, devices[d], ids, derived, handles_, watchdog);
        }
      } catch (...) {
        failures[d] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

ncclComm_t Communicators::handle(CommId comm, RankId rank) const {
  if (scenario_ == nullptr || comm >= handles_.size()) return nullptr;
  const int member = member_index(scenario_->comms[comm], rank);
  return member < 0 ? nullptr : handles_[comm][static_cast<std::size_t>(member)];
}

std::vector<ncclComm_t> Communicators::all() const {
  std::vector<ncclComm_t> out;
  for (const auto& per_comm : handles_) {
    for (ncclComm_t h : per_comm) {
      if (h != nullptr) out.push_back(h);
    }
  }
  return out;
}

void Communicators::destroy(const Watchdog& watchdog) {
  try {
    for (ncclComm_t h : all()) nccl_check(ncclCommFinalize(h), "ncclCommFinalize");
    for (ncclComm_t h : all()) watchdog.wait("finalizing a communicator", [h] { return ready(h); });
    for (ncclComm_t h : all()) ncclCommDestroy(h);
    handles_.clear();
  } catch (const std::exception&) {
    abort_all();
    throw;
  }
}

void Communicators::abort_all() {
  for (ncclComm_t h : all()) ncclCommAbort(h);
  handles_.clear();
}

}  // namespace amaxcheck::gpu
