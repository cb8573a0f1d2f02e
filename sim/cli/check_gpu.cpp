#include "cli/check_gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli/commands.h"
#include "cli/hazard_report.h"
#include "cli/launch_exchange.h"
#include "cli/verdict_report.h"
#include "cuda/bootstrap.h"
#include "cuda/launch_env.h"
#if AMAXCHECK_HAVE_CUDA
#include "cuda/differential.h"
#include "cuda/gpu_run.h"
#endif
#include "scheduler/explore.h"
#include "util/check.h"

namespace amaxcheck::cli {
namespace {

/// This process's place in the launch, and the exchange that reaches the other processes
/// (nullptr when this process runs every rank).
struct ProcessLaunch {
  gpu::LaunchEnv env;
  std::unique_ptr<gpu::IdExchange> exchange;
};

std::string describe(const gpu::LaunchEnv& env) {
  return fmt::format("process {} of {} ({})", env.world_rank, env.world_size, env.launcher);
}

/// Reads the launcher's variables. A multi-process launch needs a program that can reach its
/// peers; this check comes before the device check, so plain amaxcheck under mpirun says what
/// to run instead on any machine, with or without a GPU.
ProcessLaunch join_launch() {
  ProcessLaunch launch{gpu::launch_env_from(gpu::process_env()), nullptr};
  if (!launch.env.multi_process()) return launch;
  if (!have_exchange_factory()) {
    throw InputError(fmt::format(
        "this process was launched as process {} of {} by {}, but this program cannot reach the other processes: "
        "multi-process GPU runs need amaxcheck-mpi (built when OpenMPI is found, at {} in the build folder, next to "
        "amaxcheck); without a launcher, amaxcheck runs every rank on this machine's GPUs from one process",
        launch.env.world_rank, launch.env.world_size, launch.env.launcher, mpi_program_path));
  }
  launch.exchange = make_launch_exchange();
  return launch;
}

std::optional<std::string> device_unusable_reason() {
#if AMAXCHECK_HAVE_CUDA
  return gpu::cuda_unavailable_reason();
#else
  return std::string(
      "no usable CUDA device: this amaxcheck was built without the CUDA backend (meson -Dcuda=disabled, or nvcc/NCCL "
      "not found)");
#endif
}

/// Exit 2 in every process of the launch when any of them cannot use a GPU. They learn it
/// together, so no process is left waiting in a collective for a peer that has already gone.
void require_devices(const ProcessLaunch& launch) {
  const auto reason = device_unusable_reason();
  if (!launch.exchange) {
    if (reason) throw InputError(*reason);
    return;
  }
  const std::vector<bool> ok = gpu::share_flags(*launch.exchange, !reason);
  if (reason) throw InputError(fmt::format("{}: {}", describe(launch.env), *reason));
  for (std::size_t p = 0; p < ok.size(); ++p) {
    if (!ok[p]) {
      throw InputError(fmt::format("{}: process {} has no usable CUDA device (its own output says why); no process ran",
                                   describe(launch.env), p));
    }
  }
}

#if AMAXCHECK_HAVE_CUDA
/// The fields every GPU report starts with. runs / complete / strategy / seed are those of every
/// `check --json` report, so the harness reads this one like the simulator's (one schedule, so
/// never complete coverage).
nlohmann::ordered_json report_head(const CheckRequest& request, const ProcessLaunch& launch) {
  nlohmann::ordered_json j;
  j["backend"] = "gpu";
  j["process"] = launch.env.world_rank;
  j["processes"] = launch.env.world_size;
  j["launcher"] = launch.env.launcher;
  j["strategy"] = request.explore.strategy;
  j["seed"] = request.explore.seed;
  j["runs"] = 1;
  j["complete"] = false;
  return j;
}

/// The simulated run stopped at the step cap: its hazards stand, but there is no whole
/// schedule for the GPUs, so nothing runs there and the check is inconclusive (or a hazard).
int report_cut_schedule(const sched::RunResult& simulated, const CheckRequest& request, bool json,
                        const ProcessLaunch& launch, std::uint64_t cap) {
  const sched::VerdictKind verdict =
      simulated.hazards.empty() ? sched::VerdictKind::inconclusive : sched::VerdictKind::hazard;
  const std::string why = fmt::format(
      "not run on the GPUs: the simulated run stopped at the step cap of {} steps, so there is no whole schedule to "
      "replay (raise it with --max-steps)",
      cap);
  if (json) {
    nlohmann::ordered_json j = report_head(request, launch);
    j["steps_replayed"] = 0;
    j["oracle"] = why;
    j["cut_short"] = nlohmann::ordered_json::array({{{"cause", "step_cap"}, {"limit", cap}, {"raise_with", "--max-steps"}}});
    j["verdict"] = sched::to_string(verdict);
    j["hazards"] = nlohmann::ordered_json::array();
    for (const auto& h : simulated.hazards) j["hazards"].push_back(hazard_json(h, ""));
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}\n", describe(launch.env));
    fmt::print("oracle: {}\n", why);
    for (const auto& h : simulated.hazards) fmt::print("{}", format_hazard(h, ""));
    if (verdict == sched::VerdictKind::inconclusive) fmt::print("inconclusive: {}\n", why);
  }
  return exit_code(verdict);
}

/// Every process runs the same seeded simulation, so all hold the same schedule, and replays
/// only its own ranks; the checked values of every replica reach every process (read_checks),
/// so each process compares the whole run and prints a full report.
int replay_and_compare(const Scenario& requested, const CheckRequest& request, bool json, const ProcessLaunch& launch) {
  // On too few GPUs (one process) this is the 1-rank-communicator variant; both backends run it.
  const gpu::FittedScenario fitted = gpu::fit_to_this_machine(requested, launch.exchange.get());
  const Scenario& scenario = fitted.scenario;
  // The schedule: run 0 of the requested strategy, every step recorded (run 0 exists even with
  // --runs 0: the GPUs replay one schedule).
  sched::ExploreOptions first = request.explore;
  first.runs = std::max<std::uint64_t>(first.runs, 1);
  auto strategy = sched::make_strategy(scenario, first);
  AMAX_CHECK(strategy->begin_run(0), "the strategy has no run 0");
  sched::RunOptions options = request.explore.run;
  options.record_steps = true;
  const sched::RunResult simulated = sched::run_once(scenario, *strategy, options);
  if (simulated.outcome == sched::RunOutcome::step_limit) {
    // A prefix of a schedule: the GPUs could not finish it without running ops in an order the
    // simulator never chose, and their hang or values would say nothing. Not replayed.
    return report_cut_schedule(simulated, request, json, launch, sched::effective_step_cap(scenario, options));
  }
  gpu::GpuRunOptions gpu_options;
  gpu_options.exchange = launch.exchange.get();
  const gpu::GpuRunResult on_gpu = gpu::run_on_gpus(scenario, simulated.steps, gpu_options);
  if (!on_gpu.device_error.empty()) {
    throw DeviceError(fmt::format("{} during the replay of the schedule", on_gpu.device_error));
  }
  // The simulator's final state for the same schedule, for the comparison.
  Engine engine(scenario, request.explore.run.engine);
  for (const Step& step : simulated.steps) engine.apply(step.action);
  const bool simulated_stuck = simulated.outcome == sched::RunOutcome::stuck;
  const gpu::OracleVerdict oracle = gpu::judge_against_simulator(engine, simulated_stuck, on_gpu);
  std::vector<Hazard> hazards = simulated.hazards;
  if (on_gpu.hang) hazards.push_back(gpu::hang_hazard(on_gpu));
  // One schedule: a sample at best; nothing when the GPUs did not follow it (a gate gave up).
  const sched::VerdictKind verdict = !hazards.empty() || !(oracle.agree || oracle.cut_short)
                                         ? sched::VerdictKind::hazard
                                     : oracle.cut_short ? sched::VerdictKind::inconclusive
                                                        : sched::VerdictKind::no_hazard_found;
  if (json) {
    nlohmann::ordered_json j = report_head(request, launch);
    j["nccl_version"] = on_gpu.nccl_version;
    j["placement"] = on_gpu.placement;
    j["one_rank_comms"] = fitted.one_rank_comms;
    j["fit"] = fitted.note;
    j["steps_replayed"] = on_gpu.steps_replayed;
    j["data_check_wrong"] = on_gpu.data_check_wrong;
    j["oracle"] = oracle.line;
    if (oracle.cut_short) {
      // The device-side gate deadline (GpuRunOptions::gate_timeout_ms), no CLI option raises it.
      j["cut_short"] = nlohmann::ordered_json::array(
          {{{"cause", "gate_timeout"}, {"limit", gpu_options.gate_timeout_ms}, {"raise_with", nullptr}}});
    }
    j["oracle_mismatch"] =
        oracle.mismatch ? nlohmann::ordered_json(oracle.mismatch->describe()) : nlohmann::ordered_json(nullptr);
    j["gpu_notes"] = on_gpu.notes;
    j["verdict"] = sched::to_string(verdict);
    j["hazards"] = nlohmann::ordered_json::array();
    for (const auto& h : hazards) j["hazards"].push_back(hazard_json(h, ""));
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}\n", describe(launch.env));
    fmt::print("gpu backend: NCCL {}, {}\n", on_gpu.nccl_version, on_gpu.placement);
    if (fitted.one_rank_comms) fmt::print("note: {}\n", fitted.note);
    fmt::print("replayed {} steps; data check: {} wrong element(s)\n", on_gpu.steps_replayed, on_gpu.data_check_wrong);
    fmt::print("oracle: {}\n", oracle.line);
    // What the replay saw beyond the values: leftover ops released, a hang's abort and drain.
    for (const std::string& note : on_gpu.notes) fmt::print("gpu: {}\n", note);
    for (const auto& h : hazards) fmt::print("{}", format_hazard(h, ""));
    if (verdict == sched::VerdictKind::inconclusive) {
      fmt::print("inconclusive: the GPUs did not follow the schedule (a gate gave up), so the replay says nothing\n");
    }
  }
  return exit_code(verdict);
}
#endif

}  // namespace

int check_on_gpu(const Scenario& scenario, const CheckRequest& request, bool json) {
  const ProcessLaunch launch = join_launch();
  require_devices(launch);
#if AMAXCHECK_HAVE_CUDA
  return replay_and_compare(scenario, request, json, launch);
#else
  (void)scenario, (void)request, (void)json;
  throw InternalError("require_devices let a build without CUDA through");
#endif
}

}  // namespace amaxcheck::cli
