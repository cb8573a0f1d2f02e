#include "cuda/differential.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "util/check.h"

namespace amaxcheck::gpu {
namespace {

std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

}  // namespace

bool same_value(float simulated, float gpu) {
  if (std::isnan(simulated) && std::isnan(gpu)) return true;
  return bits(simulated) == bits(gpu);
}

std::string OracleMismatch::describe() const {
  return fmt::format("oracle mismatch: {} on rank {} buffer {}[{}]: simulator {} (0x{:08x}), gpu {} (0x{:08x})",
                     tensor, rank, buffer, range.offset + element, simulated, bits(simulated), gpu, bits(gpu));
}

std::optional<OracleMismatch> first_mismatch(const Engine& simulated, const GpuRunResult& gpu) {
  const Scenario& scenario = simulated.scenario();
  AMAX_CHECK(gpu.checks.size() == scenario.checks.size(), "GPU result does not hold this scenario's checks");
  for (std::size_t c = 0; c < scenario.checks.size(); ++c) {
    const CheckValues& got = gpu.checks[c];
    AMAX_CHECK(got.replicas.size() == scenario.checks[c].replicas.size(), "GPU result replica count differs");
    for (const ReplicaValues& replica : got.replicas) {
      const std::vector<float> want = simulated.read(replica.rank, replica.range);
      AMAX_CHECK(want.size() == replica.values.size(), "GPU result range size differs");
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (same_value(want[i], replica.values[i])) continue;
        return OracleMismatch{got.tensor, replica.rank, replica.range, i, want[i], replica.values[i],
                              scenario.ranks.at(replica.rank).buffers.at(replica.range.buffer).name};
      }
    }
  }
  return std::nullopt;
}

std::size_t compared_values(const GpuRunResult& gpu) {
  std::size_t n = 0;
  for (const CheckValues& check : gpu.checks) {
    for (const ReplicaValues& replica : check.replicas) n += replica.values.size();
  }
  return n;
}

OracleVerdict judge_against_simulator(const Engine& simulated, bool simulated_stuck, const GpuRunResult& gpu) {
  OracleVerdict out;
  const std::string data_check =
      gpu.data_check_wrong == 0 ? std::string()
                                : fmt::format("; and the data check found {} wrong element(s)", gpu.data_check_wrong);
  if (gpu.gate_timed_out && gpu.data_check_wrong == 0) {
    // A failed data check does not depend on the schedule: it stays a disagreement below.
    out.cut_short = true;
    out.line = "not compared: a gate gave up waiting on the device, so the GPUs did not follow the schedule";
  } else if (gpu.hang) {
    out.agree = simulated_stuck && gpu.data_check_wrong == 0;
    out.line = (simulated_stuck ? std::string("both backends hang: the simulated run deadlocked and the GPUs hung "
                                              "(no final values to compare)")
                                : std::string("not compared: the GPUs hung where the simulated run finished")) +
               data_check;
  } else if (simulated_stuck) {
    out.line = "not compared: the simulated run deadlocked, but the GPUs finished every op it left" + data_check;
  } else if ((out.mismatch = first_mismatch(simulated, gpu))) {
    out.line = out.mismatch->describe() + data_check;
  } else if (gpu.data_check_wrong > 0) {
    out.line = fmt::format("the checked values are equal, but the data check found {} wrong element(s)",
                           gpu.data_check_wrong);
  } else if (const std::size_t n = compared_values(gpu); n == 0) {
    out.agree = true;
    out.line = "nothing compared: the scenario declares no value checks (its hazards are the simulator's)";
  } else {
    out.agree = true;
    out.line = fmt::format("simulator and GPUs agree bit for bit on {} value(s) of {} check(s)", n, gpu.checks.size());
  }
  return out;
}

}  // namespace amaxcheck::gpu
