#include "cli/check_gpu.h"

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/hazard_report.h"
#if AMAXCHECK_HAVE_CUDA
#include "cuda/differential.h"
#include "cuda/gpu_run.h"
#endif
#include "scheduler/explore.h"
#include "util/check.h"

namespace amaxcheck::cli {

#if !AMAXCHECK_HAVE_CUDA
int check_on_gpu(const Scenario&, const CheckRequest&, bool) {
  throw InputError("no usable CUDA device: this amaxcheck was built without the CUDA backend (meson -Dcuda=disabled, or nvcc/NCCL not found)");
}
#else
int check_on_gpu(const Scenario& requested, const CheckRequest& request, bool json) {
  if (auto reason = gpu::cuda_unavailable_reason()) throw InputError(*reason);
  // On too few GPUs this is the 1-rank-communicator variant; both backends then run it.
  const gpu::FittedScenario fitted = gpu::fit_to_this_machine(requested);
  const Scenario& scenario = fitted.scenario;
  // The schedule: run 0 of the requested strategy, every step recorded.
  auto strategy = sched::make_run_strategy(scenario, request.explore, 0);
  sched::RunOptions options = request.explore.run;
  options.record_steps = true;
  const sched::RunResult simulated = sched::run_once(scenario, *strategy, options);
  const gpu::GpuRunResult on_gpu = gpu::run_on_gpus(scenario, simulated.steps);
  // The simulator's final state for the same schedule, for the comparison.
  Engine engine(scenario, request.explore.run.engine);
  for (const Step& step : simulated.steps) engine.apply(step.action);
  const auto mismatch = on_gpu.hang ? std::nullopt : gpu::first_mismatch(engine, on_gpu);
  std::vector<Hazard> hazards = simulated.hazards;
  if (on_gpu.hang) hazards.push_back(gpu::hang_hazard(on_gpu));
  const bool agree = !mismatch && on_gpu.data_check_wrong == 0 && (on_gpu.hang == (simulated.outcome == sched::RunOutcome::stuck));
  if (json) {
    nlohmann::ordered_json j;
    j["backend"] = "gpu";
    j["nccl_version"] = on_gpu.nccl_version;
    j["placement"] = on_gpu.placement;
    j["one_rank_comms"] = fitted.one_rank_comms;
    j["fit"] = fitted.note;
    j["steps_replayed"] = on_gpu.steps_replayed;
    j["data_check_wrong"] = on_gpu.data_check_wrong;
    j["oracle_mismatch"] = mismatch ? nlohmann::ordered_json(mismatch->describe()) : nlohmann::ordered_json(nullptr);
    j["verdict"] = hazards.empty() && agree ? "clean" : "hazard";
    j["hazards"] = nlohmann::ordered_json::array();
    for (const auto& h : hazards) j["hazards"].push_back(hazard_json(h, ""));
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("gpu backend: NCCL {}, {}\n", on_gpu.nccl_version, on_gpu.placement);
    if (fitted.one_rank_comms) fmt::print("note: {}\n", fitted.note);
    fmt::print("replayed {} steps; data check: {} wrong element(s)\n", on_gpu.steps_replayed, on_gpu.data_check_wrong);
    fmt::print("oracle: {}\n", mismatch ? mismatch->describe() : std::string("simulator and GPUs agree bit for bit"));
    for (const auto& h : hazards) fmt::print("{}", format_hazard(h, ""));
  }
  return hazards.empty() && agree ? exit_clean : exit_hazard;
}
#endif

}  // namespace amaxcheck::cli
