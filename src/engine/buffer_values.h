#pragma once
/// One rank's buffer values, every buffer in one array, and how a run starts them over.
///
/// Why one array, not a vector per buffer: every run starts each buffer over (its init values,
/// zeros after them), and a scenario has dozens of small buffers a rank (te-sync at DP 2: 29 of
/// them, 110 values in all, 8 with init values). Rewritten one vector at a time, that was two
/// library calls a buffer and most of an engine's reset (issue 19). Here a reset is one fill of
/// the whole array and one copy per buffer that has init values (read from the scenario, as
/// before). The array is sized once, when the engine is built, so a view of a buffer (a
/// kernel's, OpPlan) stays valid for the engine's life.

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck {

class BufferValues {
 public:
  BufferValues() = default;
  /// The buffers of `spec` (a rank's), at their start (restore). The array is sized exactly:
  /// buffer values are most of a large scenario's memory.
  explicit BufferValues(const std::vector<Buffer>& spec) {
    std::size_t total = 0;
    for (const Buffer& b : spec) total += b.size;
    values_.assign(total, 0.0f);
    begin_.reserve(spec.size() + 1);
    for (const Buffer& b : spec) begin_.push_back(begin_.back() + b.size);
    restore(spec);
  }

  /// How many buffers.
  std::size_t size() const { return begin_.size() - 1; }
  std::span<float> operator[](std::size_t buffer) {
    return {values_.data() + begin_[buffer], begin_[buffer + 1] - begin_[buffer]};
  }
  std::span<const float> operator[](std::size_t buffer) const {
    return {values_.data() + begin_[buffer], begin_[buffer + 1] - begin_[buffer]};
  }

  /// Every buffer back to its start: its init values in `spec` (the rank's buffers, as the
  /// constructor had them; at most as many values as the buffer holds), zeros after them.
  void restore(const std::vector<Buffer>& spec) {
    std::fill(values_.begin(), values_.end(), 0.0f);
    for (std::size_t b = 0; b < spec.size(); ++b) {
      const std::vector<float>& init = spec[b].init;
      if (init.empty()) continue;
      const std::span<float> values = (*this)[b];
      std::copy_n(init.begin(), std::min(init.size(), values.size()), values.begin());
    }
  }

 private:
  std::vector<float> values_;
  std::vector<std::size_t> begin_{0};  ///< buffer b is values_[begin_[b], begin_[b + 1])
};

}  // namespace amaxcheck
