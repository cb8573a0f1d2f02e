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

/// How many values first_mismatch compares: every element of every replica of every check.
std::size_t compared_values(const GpuRunResult& gpu);

/// What comparing a GPU replay with the simulator's run of the same schedule can say, and the
/// report's "oracle:" line that says it. Agreement is claimed only where values were compared
/// and were equal (or where both backends hung at the same schedule): a GPU that hung has no
/// final values, a gate that gave up means the device did not follow the schedule, and a
/// scenario without checks compares nothing. None of those may read as agreement.
struct OracleVerdict {
  bool agree = false;  ///< no disagreement: the comparison found nothing the oracle objects to
  bool cut_short = false;  ///< the comparison could not be made for a reason that is no hazard
  std::optional<OracleMismatch> mismatch;
  std::string line;  ///< after "oracle: "
};

/// `simulated` has applied the whole schedule; `simulated_stuck`: the schedule left work
/// behind (a simulated deadlock).
OracleVerdict judge_against_simulator(const Engine& simulated, bool simulated_stuck, const GpuRunResult& gpu);

}  // namespace amaxcheck::gpu
