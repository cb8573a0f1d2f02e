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

}  // namespace amaxcheck::gpu
