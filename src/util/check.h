#pragma once
/// Assertions that survive NDEBUG, and the two error types the CLI maps to exit codes.
///
/// - InputError: the user gave us something malformed (exit 2). The message names the file,
///   line or field and what was expected.
/// - InternalError: an invariant of amaxcheck itself broke (exit 3). Never a user hazard.
/// - DeviceError: the GPU, its driver or NCCL failed at run time (exit 5): neither the input's
///   fault nor a bug of amaxcheck (the GPU backend's GpuError is one).

#include <stdexcept>
#include <string>

namespace amaxcheck {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct InternalError : std::logic_error {
  using std::logic_error::logic_error;
};

struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void check_failed(const char* expr, const char* file, int line, const std::string& why);

}  // namespace amaxcheck

/// AMAX_CHECK(cond, why): throws InternalError naming the condition and location.
#define AMAX_CHECK(cond, why)                                            \
  do {                                                                   \
    if (!(cond)) ::amaxcheck::check_failed(#cond, __FILE__, __LINE__, (why)); \
  } while (false)
