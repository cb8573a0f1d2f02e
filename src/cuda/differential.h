#pragma once
/// The differential check: the GPU's final values against the simulator's, bit for bit.
/// Pure C++ (no CUDA), so it is tested on a CPU with hand-made results.

#include <cstddef>
#include <optional>
#include <string>

#include "cuda/gpu_run.h"
#include "engine/engine.h"

namespace amaxcheck::gpu {

/// Bitwise equality, except that any two NaNs are equal: the simulator keeps a NaN's payload
/// and cuda_fp8.h returns the canonical NaN, and neither is a divergence of the protocol.
bool same_value(float simulated, float gpu);

/// The first element where the two backends differ.
struct OracleMismatch {
  std::string tensor;
  RankId rank = 0;
  Range range;
  std::size_t element = 0;  ///< index within `range`
  float simulated = 0;
  float gpu = 0;
  std::string buffer;  ///< the buffer's name on that rank

  /// One line: "oracle mismatch: <tensor> on rank R buffer B[i]: simulator 1.5 (0x3fc00000), gpu ..."
  std::string describe() const;
};

/// Compares every replica of every check, in the scenario's order, element by element, and
/// returns the first difference. Throws InternalError when the result does not hold the
/// scenario's checks (wrong scenario).
std::optional<OracleMismatch> first_mismatch(const Engine& simulated, const GpuRunResult& gpu);

}  // namespace amaxcheck::gpu
