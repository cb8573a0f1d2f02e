// Session set-up, data check, read-back and tear-down. The replay itself is in replayer.cpp.
#include "cuda/session.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "cuda/bootstrap.h"
#include "cuda/compat.h"
#include "cuda/cuda_error.h"
#include "cuda/data_check.h"
#include "cuda/device_probe.h"
#include "cuda/kernels.h"
#include "cuda/nccl_ops.h"
#include "util/check.h"

namespace amaxcheck::gpu {
namespace {

UniqueIdBytes make_nccl_id() {
  ncclUniqueId id;
  nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId", false);
  UniqueIdBytes out;
  std::copy(id.internal, id.internal + unique_id_bytes, out.begin());
  return out;
}

}  // namespace

PlacementInput placement_input_here(const DeviceProbe& probe, const IdExchange* exchange) {
  PlacementInput input;
  if (exchange != nullptr) {
    input.launch = launch_env_from(process_env());
    if (input.launch.world_rank != exchange->rank() || input.launch.world_size != exchange->size()) {
      throw InputError(fmt::format("the launcher's variables say rank {} of {}, MPI says rank {} of {}",
                                   input.launch.world_rank, input.launch.world_size, exchange->rank(),
                                   exchange->size()));
    }
  }
  input.device_count = probe.device_count;
  input.nccl_version = probe.nccl_runtime_version;
  input.multi_rank_env = compat::multi_rank_gpu_enabled(probe.nccl_runtime_version);
  return input;
}

Session::Session(const Scenario& scenario, const GpuRunOptions& options) : scenario_(scenario), options_(options) {
  const DeviceProbe probe = probe_devices();
  if (!probe.usable()) throw InputError("no usable CUDA device: " + probe.unusable_reason);
  nccl_version_ = probe.nccl_runtime_version;

  SingleProcessExchange single;
  IdExchange& exchange = options_.exchange != nullptr ? *options_.exchange : single;
  placement_ = plan_placement(scenario_, placement_input_here(probe, options_.exchange));
  if (!placement_.fits()) throw InputError("the scenario does not fit this machine: " + placement_.note);
  watchdog_ = std::make_unique<Watchdog>(std::chrono::milliseconds(options_.op_timeout_ms),
                                         std::chrono::milliseconds(options_.run_timeout_ms));

  // Per-rank resources, one host thread per GPU (the map is filled before the threads start).
  std::map<int, std::vector<RankId>> by_device;
  for (RankId r : placement_.local_ranks) {
    ranks_[r];
    by_device[placement_.device_of_rank.at(r)].push_back(r);
  }
  std::vector<std::exception_ptr> failures(by_device.size());
  std::vector<std::thread> threads;
  std::size_t slot = 0;
  for (const auto& [device, ranks] : by_device) {
    threads.emplace_back([this, &failures, slot, device = device, ranks = ranks] {
      try {
        cuda_check(cudaSetDevice(device), fmt::format("selecting GPU {}", device));
        cuda_check(preload_kernels(), fmt::format("loading the backend's kernels on GPU {}", device));
        for (RankId r : ranks) ranks_.at(r).create(scenario_, r, device);
      } catch (...) {
        failures[slot] = std::current_exception();
      }
    });
    ++slot;
  }
  for (auto& t : threads) t.join();
  for (auto& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
  for (auto& [r, res] : ranks_) res.write_initial_values(scenario_, *watchdog_);

  // One gate per gated op of every local rank.
  std::size_t gates = 0;
  for (RankId r : placement_.local_ranks) {
    auto& per_rank = gate_of_[r];
    for (const Thread& thread : scenario_.ranks[r].threads) {
      per_rank.emplace_back(thread.program.size(), -1);
      for (std::size_t i = 0; i < thread.program.size(); ++i) {
        if (options_.gates && moves_data(thread.program[i].kind)) per_rank.back()[i] = static_cast<int>(gates++);
      }
    }
  }
  gates_ = std::make_unique<GateBank>(gates);

  const auto ids = share_unique_ids(exchange, scenario_.comms.size(), make_nccl_id);
  comms_.create(scenario_, placement_, ids, options_.derived_comms, *watchdog_);
  for (ncclComm_t h : comms_.all()) watchdog_->watch(h);
}

Session::~Session() {
  // A replay that stopped early (a diverged schedule, an exception) leaves gated kernels
  // spinning; open them all so nothing below waits on a gate's own timeout.
  if (gates_) gates_->release_all();
  if (!aborted_) {
    try {
      comms_.destroy(*watchdog_);
    } catch (const std::exception&) {
      aborted_ = true;  // destroy() aborted them
    }
  }
  for (auto& [r, res] : ranks_) res.destroy(device_healthy_);
  // Gate kernels read the pinned gate words; on a wedged device keep them alive forever.
  if (!device_healthy_) static_cast<void>(gates_.release());
}

bool Session::is_local(RankId rank) const { return ranks_.count(rank) != 0; }

RankResources& Session::resources(RankId rank) { return ranks_.at(rank); }

void Session::data_check(GpuRunResult& result) {
  for (CommId c = 0; c < scenario_.comms.size(); ++c) {
    const Communicator& comm = scenario_.comms[c];
    const std::size_t m = comm.members.size();
    for (const CollectiveSignature& sig : signatures_of(scenario_, c)) {
      struct Local {
        RankId rank;
        std::size_t member;
        float* send = nullptr;
        float* recv = nullptr;
        cudaStream_t stream = nullptr;
      };
      std::vector<Local> locals;
      for (std::size_t i = 0; i < m; ++i) {
        if (is_local(comm.members[i])) locals.push_back({comm.members[i], i});
      }
      std::vector<std::vector<float>> inputs;
      for (Local& l : locals) {
        RankResources& res = ranks_.at(l.rank);
        cuda_check(cudaSetDevice(res.device), "selecting a device for the data check");
        l.stream = res.streams.at(0);
        void* send = nullptr;
        void* recv = nullptr;
        cuda_check(cudaMalloc(&send, std::max<std::size_t>(1, send_elements(sig, m)) * sizeof(float)), "data check");
        cuda_check(cudaMalloc(&recv, std::max<std::size_t>(1, recv_elements(sig, m)) * sizeof(float)), "data check");
        l.send = static_cast<float*>(send);
        l.recv = static_cast<float*>(recv);
        inputs.push_back(pattern_input(sig, l.member, m));
        cuda_check(cudaMemcpyAsync(l.send, inputs.back().data(), inputs.back().size() * sizeof(float),
                                   cudaMemcpyHostToDevice, l.stream),
                   "data check input");
      }
      nccl_check(ncclGroupStart(), "ncclGroupStart");
      for (Local& l : locals) {
        cuda_check(cudaSetDevice(ranks_.at(l.rank).device), "selecting a device");
        CollectiveCall call{sig.kind, l.send, l.recv, sig.send_count, sig.recv_count, sig.reduce,
                            static_cast<int>(std::min<std::size_t>(sig.root, m - 1))};
        ncclComm_t h = comms_.handle(c, l.rank);
        if (enqueue_collective(call, h, l.stream)) in_progress_[h] = true;
      }
      // A non-blocking communicator's group may still be queuing its kernels when ncclGroupEnd
      // returns (ncclInProgress, the calls inside the group having said ncclSuccess): each
      // member's communicator is then polled before its stream is waited on.
      if (nccl_check(ncclGroupEnd(), "ncclGroupEnd (data check)")) {
        for (Local& l : locals) in_progress_[comms_.handle(c, l.rank)] = true;
      }
      for (Local& l : locals) {
        ncclComm_t h = comms_.handle(c, l.rank);
        make_ready_to_call(h);
        watchdog_->wait(fmt::format("data check {} on comm {}", to_string(sig.kind), comm.name),
                        [&] { return Watchdog::stream_done(l.stream); });
        std::vector<float> got(recv_elements(sig, m));
        cuda_check(cudaMemcpy(got.data(), l.recv, got.size() * sizeof(float), cudaMemcpyDeviceToHost), "data check");
        const std::vector<float> want = expected_output(sig, l.member, m);
        std::size_t wrong = 0;
        for (std::size_t k = 0; k < want.size(); ++k) wrong += got[k] == want[k] ? 0 : 1;
        if (wrong > 0) {
          result.data_check_failures.push_back(fmt::format("{} of {} on comm {} member {}: {} of {} elements wrong",
                                                           to_string(sig.kind), sig.send_count, comm.name,
                                                           l.member, wrong, want.size()));
        }
        result.data_check_wrong += wrong;
        cudaFree(l.send);
        cudaFree(l.recv);
      }
    }
  }
}

void Session::make_ready_to_call(ncclComm_t comm) {
  auto it = in_progress_.find(comm);
  if (it == in_progress_.end() || !it->second) return;
  watchdog_->wait("a non-blocking NCCL call", [comm] {
    ncclResult_t state = ncclSuccess;
    nccl_check(ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError", false);
    if (state == ncclInProgress) return false;
    nccl_check(state, "non-blocking NCCL call", false);
    return true;
  });
  it->second = false;
}

std::vector<CheckValues> Session::read_checks() {
  SingleProcessExchange single;
  IdExchange& exchange = options_.exchange != nullptr ? *options_.exchange : single;
  std::vector<CheckValues> out;
  for (const ReplicaCheck& check : scenario_.checks) {
    CheckValues values{check.tensor, {}};
    for (const ReplicaCheck::Replica& replica : check.replicas) {
      ReplicaValues got{replica.rank, replica.range, std::vector<float>(replica.range.count, 0.0f)};
      if (is_local(replica.rank)) got.values = ranks_.at(replica.rank).read(replica.range, *watchdog_);
      const int owner = process_of_rank(replica.rank, static_cast<std::uint32_t>(scenario_.ranks.size()),
                                        exchange.size());
      if (!got.values.empty()) exchange.broadcast(got.values.data(), got.values.size() * sizeof(float), owner);
      values.replicas.push_back(std::move(got));
    }
    out.push_back(std::move(values));
  }
  return out;
}

void Session::reset() {
  AMAX_CHECK(!aborted_, "a session whose communicators were aborted cannot replay again");
  for (auto& [r, res] : ranks_) res.write_initial_values(scenario_, *watchdog_);
  gates_->reset();
}

}  // namespace amaxcheck::gpu
