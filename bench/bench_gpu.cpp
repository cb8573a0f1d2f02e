// GPU benchmarks of the CUDA+NCCL backend (src/cuda), printed as "name: value" lines for
// harness/gpu_check's report. Skips (exit 0, "SKIP: ...") without a usable device.
//
// - small all-reduce latency of an amax buffer: raw NCCL in this process vs the backend with
//   gates off (the ratio should stay <= 1.2x);
// - per-op overhead with gates on (each op released and awaited by the host);
// - extra device memory of a separate amax communicator: split sharing resources, split
//   without sharing, fresh init.
//
//   bench_gpu [--ranks N]   N members per communicator (default: one per GPU, at most 8). More
//                           members than GPUs need NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1
//                           (placement.h); otherwise the run says why and skips (exit 0).
//   bench_gpu --ranks N --probe   only set up N members (DP + amax communicator), run the data
//                           check and a short gated and free-running replay, and say whether it
//                           finished: harness/gpu_check tries NCCL_MAX_CTAS values with it
//   bench_gpu --nccl-version
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda/device_probe.h"
#include "cuda/gpu_run.h"
#include "cuda/nccl_ops.h"
#include "cuda/placement.h"
#include "cuda/session.h"
#include "model/builder.h"

namespace {

using namespace amaxcheck;
using namespace amaxcheck::gpu;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kAmaxElements = 64;
constexpr std::uint32_t kOps = 2000;
constexpr int kRepeats = 5;  ///< each figure is the best of this many timings

/// `ranks` ranks (one per GPU), a DP communicator and, optionally, an amax communicator over the
/// same ranks; each rank all-reduces its amax buffer `ops` times on the amax (or DP) communicator.
Scenario amax_loop(std::uint32_t ranks, std::uint32_t ops, bool separate_amax_comm) {
  ScenarioBuilder b("bench amax loop");
  std::vector<RankId> all;
  for (std::uint32_t r = 0; r < ranks; ++r) all.push_back(b.rank());
  const CommId dp = b.comm("dp", all);
  const CommId amax = separate_amax_comm ? b.comm("amax", all) : dp;
  for (RankId r : all) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId buf = b.buffer(r, "amax", kAmaxElements);
    for (std::uint32_t k = 0; k < ops; ++k) {
      b.op(r, t, ScenarioBuilder::all_reduce(s, amax, {buf, 0, kAmaxElements}, {buf, 0, kAmaxElements}, "amax"));
    }
  }
  return b.build();
}

/// A schedule that runs each op as soon as it can (executes, joins and completes before
/// issues), so at most one all-reduce per rank is queued: what a training step sees, and within
/// the backend's limit on ops queued behind closed gates (GpuRunOptions::max_queued_ops_per_gpu).
std::vector<Step> eager_schedule(Engine& engine) {
  std::vector<Step> steps;
  while (!engine.enabled().empty()) {
    const auto& enabled = engine.enabled();
    const auto it = std::find_if(enabled.begin(), enabled.end(),
                                 [](const Action& a) { return a.kind != ActionKind::issue; });
    steps.push_back(engine.apply(it != enabled.end() ? *it : enabled.front()));
  }
  engine.finish();
  return steps;
}

/// The smallest of kRepeats timings: host-overhead figures of well under a microsecond per op
/// are otherwise dominated by scheduling noise.
template <typename Measure>
double best_of(Measure measure) {
  double best = measure();
  for (int i = 1; i < kRepeats; ++i) best = std::min(best, measure());
  return best;
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Raw NCCL on the session's own communicators: `ops` back-to-back all-reduces per rank, then
/// one wait (or, with `wait_each`, a wait after every one: the latency a gated replay pays).
/// Returns microseconds per all-reduce.
double raw_nccl_us(Session& session, std::uint32_t ops, bool wait_each = false) {
  const Scenario& s = session.scenario();
  const CommId amax = static_cast<CommId>(s.comms.size() - 1);
  const auto start = Clock::now();
  for (std::uint32_t k = 0; k < ops; ++k) {
    ncclGroupStart();
    for (RankId r : session.placement().local_ranks) {
      RankResources& res = session.resources(r);
      cudaSetDevice(res.device);
      CollectiveCall call{OpKind::all_reduce, res.buffers[0], res.buffers[0], kAmaxElements, kAmaxElements,
                          ReduceOp::max, 0};
      enqueue_collective(call, session.comm(amax, r), res.streams[0]);
    }
    ncclGroupEnd();
    if (!wait_each) continue;
    for (RankId r : session.placement().local_ranks) {
      cudaStream_t stream = session.resources(r).streams[0];
      session.watchdog().wait("raw NCCL op", [stream] { return Watchdog::stream_done(stream); });
    }
  }
  for (RankId r : session.placement().local_ranks) {
    cudaStream_t stream = session.resources(r).streams[0];
    session.watchdog().wait("raw NCCL loop", [stream] { return Watchdog::stream_done(stream); });
  }
  return ms_since(start) * 1000.0 / ops;
}

double replay_us(Session& session, const std::vector<Step>& schedule, std::uint32_t ops) {
  session.reset();
  GpuRunResult result;
  session.replay(schedule, result);
  if (result.hang) throw std::runtime_error("hang during the benchmark: " + result.hang_reason);
  return result.replay_ms * 1000.0 / ops;
}

std::size_t used_bytes(int device) {
  cudaSetDevice(device);
  std::size_t free_bytes = 0, total = 0;
  cudaMemGetInfo(&free_bytes, &total);
  return total - free_bytes;
}

/// Device memory of a session (after its data check made NCCL connect), in MiB.
double session_mib(const Scenario& s, CommCreation how) {
  const std::size_t before = used_bytes(0);
  GpuRunOptions options;
  options.derived_comms = how;
  Session session(s, options);
  GpuRunResult result;
  session.data_check(result);
  cudaDeviceSynchronize();
  return static_cast<double>(used_bytes(0) - before) / (1024.0 * 1024.0);
}

/// Whether `ranks` members can work here at all under the current NCCL settings: set-up, data
/// check, then a short gated and a short free-running replay. A hang is reported by the
/// watchdog (3 s per step), so a setting that starves the device fails fast.
int probe_members(std::uint32_t ranks) {
  constexpr std::uint32_t kProbeOps = 50;
  const Scenario s = amax_loop(ranks, kProbeOps, true);
  Engine engine(s);
  const std::vector<Step> schedule = eager_schedule(engine);
  for (bool gates : {true, false}) {
    GpuRunOptions options;
    options.gates = gates;
    options.op_timeout_ms = 3000;
    const auto start = Clock::now();
    const GpuRunResult result = run_on_gpus(s, schedule, options);
    if (result.hang || result.data_check_wrong != 0) {
      std::printf("FAILED: probe with %u members, gates %s: %s\n", ranks, gates ? "on" : "off",
                  result.hang ? result.hang_reason.c_str() : "the data check found wrong elements");
      return 1;
    }
    std::printf("probe_gates_%s: ok, %.0f ms (set-up %.0f ms, %.2f us per all-reduce)\n", gates ? "on" : "off",
                ms_since(start), result.setup_ms, result.replay_ms * 1000.0 / kProbeOps);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Line by line, so a step killed by gpu_check's timeout still shows how far it got.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc > 1 && std::string(argv[1]) == "--nccl-version") {
    int version = 0;
    ncclGetVersion(&version);
    std::printf("NCCL %s (runtime library), %d.%d.%d (headers)\n", nccl_version_text(version).c_str(), NCCL_MAJOR,
                NCCL_MINOR, NCCL_PATCH);
    return 0;
  }
  unsigned long wanted = 0;  // 0: one member per GPU
  const bool probe_only = argc > 3 && std::string(argv[3]) == "--probe";
  if (argc > 1 && std::string(argv[1]) == "--ranks") {
    wanted = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0;
    if (wanted == 0 || wanted > 64) {
      std::printf("FAILED: --ranks needs a member count from 1 to 64\n");
      return 2;
    }
  }
  if (auto reason = cuda_unavailable_reason()) {
    std::printf("SKIP: %s\n", reason->c_str());
    return 0;
  }
  const DeviceProbe probe = probe_devices();
  const auto ranks = static_cast<std::uint32_t>(wanted != 0 ? wanted : std::min(probe.device_count, 8));
  std::printf("nccl_version: %s\n", nccl_version_text(probe.nccl_runtime_version).c_str());
  try {
    const Scenario s = amax_loop(ranks, kOps, true);
    const Placement placement = plan_placement(s, placement_input_here(probe, nullptr));
    std::printf("ranks: %u (%s)\n", ranks, placement.note.c_str());
    if (!placement.fits()) {
      std::printf("SKIP: %u members do not fit here\n", ranks);
      return 0;
    }
    if (probe_only) return probe_members(ranks);
    Engine engine(s);
    const std::vector<Step> schedule = eager_schedule(engine);

    GpuRunOptions off;
    off.gates = false;
    Session free_running(s, off);
    GpuRunResult warm;
    free_running.data_check(warm);
    raw_nccl_us(free_running, 50);  // warm-up
    const double raw = best_of([&] { return raw_nccl_us(free_running, kOps); });
    const double backend = best_of([&] { return replay_us(free_running, schedule, kOps); });
    std::printf("allreduce_%u_floats_raw_nccl_us: %.2f\n", kAmaxElements, raw);
    std::printf("allreduce_%u_floats_backend_gates_off_us: %.2f\n", kAmaxElements, backend);
    std::printf("backend_over_raw_ratio: %.2f (target <= 1.2)\n", backend / raw);

    Session gated(s, GpuRunOptions{});
    GpuRunResult warm_gated;
    gated.data_check(warm_gated);
    const double with_gates = best_of([&] { return replay_us(gated, schedule, kOps); });
    const double raw_latency = best_of([&] { return raw_nccl_us(gated, kOps, true); });
    std::printf("allreduce_raw_nccl_each_awaited_us: %.2f\n", raw_latency);
    std::printf("allreduce_backend_gates_on_us: %.2f\n", with_gates);
    std::printf("per_op_overhead_gates_on_us: %.2f (gated replay minus raw NCCL with each op awaited)\n",
                with_gates - raw_latency);

    const double dp_only = session_mib(amax_loop(ranks, 1, false), CommCreation::fresh_init);
    for (CommCreation how : enum_values<CommCreation>()) {
      const double both = session_mib(amax_loop(ranks, 1, true), how);
      std::printf("amax_comm_extra_mib_gpu0_%s: %.1f (%u member(s) on GPU 0)\n", to_string(how),
                  both - dp_only, static_cast<unsigned>(std::count(placement.device_of_rank.begin(),
                                                                   placement.device_of_rank.end(), 0)));
    }
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
  return 0;
}
