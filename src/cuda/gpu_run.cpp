#include "cuda/gpu_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <string>
#include <vector>

#include "cuda/bootstrap.h"
#include "cuda/device_probe.h"
#include "cuda/session.h"
#include "model/split_communicators.h"
#include "util/check.h"

namespace amaxcheck::gpu {

const char* to_string(CommCreation creation) { return enum_name(creation); }

namespace {

/// The read-back is a broadcast from every rank's process: a process whose replay hung skips
/// it, so the others must learn of the hang first or they would wait for it forever. Their own
/// result becomes a hang too (the run as a whole hung), naming the processes that saw it.
void note_hangs_elsewhere(IdExchange& exchange, GpuRunResult& result) {
  // A device error is cleaned up as a hang (so the flag below goes out), but it is no verdict
  // on the scenario: every process learns of it and reports a device error, not a hang.
  const std::vector<bool> healthy = share_flags(exchange, result.device_error.empty());
  std::vector<std::string> failed;
  for (std::size_t p = 0; p < healthy.size(); ++p) {
    if (!healthy[p]) failed.push_back(std::to_string(p));
  }
  if (result.device_error.empty() && !failed.empty()) {
    result.device_error = fmt::format("process(es) {} hit a device error (their reports say which)", fmt::join(failed, ", "));
  }
  const std::vector<bool> finished = share_flags(exchange, !result.hang);
  if (result.hang) return;
  std::vector<std::string> hung;
  for (std::size_t p = 0; p < finished.size(); ++p) {
    if (!finished[p]) hung.push_back(std::to_string(p));
  }
  if (hung.empty()) return;
  result.hang = true;
  result.hang_reason = fmt::format("process(es) {} hung (their reports name the stuck ops)", fmt::join(hung, ", "));
}

}  // namespace

FittedScenario fit_to_this_machine(const Scenario& scenario, const IdExchange* exchange) {
  const DeviceProbe probe = probe_devices();
  if (!probe.usable()) throw InputError("no usable CUDA device: " + probe.unusable_reason);
  const PlacementInput input = placement_input_here(probe, exchange);
  const Placement as_written = plan_placement(scenario, input);
  if (as_written.fits()) return {scenario, false, as_written.note};
  if (input.launch.multi_process()) throw InputError("the scenario does not fit this launch: " + as_written.note);
  Scenario variant = split_communicators_per_rank(scenario);
  const Placement split = plan_placement(variant, input);
  AMAX_CHECK(split.fits(), "the 1-rank-communicator variant must fit any machine with a GPU");
  return {std::move(variant), true, as_written.note + " => running the 1-rank-communicator variant"};
}

GpuRunResult run_on_gpus(const Scenario& scenario, const std::vector<Step>& schedule, const GpuRunOptions& options) {
  GpuRunResult result;
  const auto start = std::chrono::steady_clock::now();
  Session session(scenario, options);
  result.nccl_version = nccl_version_text(session.nccl_version());
  result.placement = session.placement().note;
  if (options.data_check) session.data_check(result);
  result.setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  session.replay(schedule, result);
  if (options.exchange != nullptr) note_hangs_elsewhere(*options.exchange, result);
  if (!result.hang) result.checks = session.read_checks();
  return result;
}

Hazard hang_hazard(const GpuRunResult& result) {
  Hazard hazard;
  hazard.kind = HazardKind::deadlock;
  hazard.summary = fmt::format("hang on GPU: {}", result.hang_reason);
  for (const StuckGpuOp& stuck : result.stuck) {
    hazard.participants.push_back(Participant{stuck.rank, stuck.lane, stuck.op, stuck.op_name, stuck.origin, 0});
    hazard.details.push_back(fmt::format("rank {} {} '{}' ({}): {}", stuck.rank, stuck.lane, stuck.op_name,
                                         stuck.origin, stuck.state));
  }
  hazard.details.push_back("the watchdog aborted every NCCL communicator and released every gate");
  return hazard;
}

}  // namespace amaxcheck::gpu
