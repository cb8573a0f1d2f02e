#pragma once
/// A table with a row per rank, each row its own length (one entry per thread, stream or
/// event of that rank), kept in one array.
///
/// Why not a vector of vectors: an engine builds several such tables when it is made (lane
/// names, op ordinals, synchronizing threads), and one vector per rank and table is most of
/// what building an engine for a small scenario costs. Rows are appended in rank order while
/// the engine is built and never change length afterwards.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "util/check.h"

namespace amaxcheck {

template <typename T>
class PerRank {
 public:
  /// Room for `ranks` rows of `entries` entries in all (an estimate: only memory).
  void reserve(std::size_t ranks, std::size_t entries) {
    row_begin_.reserve(ranks + 1);
    values_.reserve(entries);
  }

  /// Appends the next rank's row of `count` copies of `value`; returns it to fill.
  std::span<T> add_row(std::size_t count, const T& value = T{}) {
    if (row_begin_.empty()) row_begin_.push_back(0);
    values_.resize(values_.size() + count, value);
    row_begin_.push_back(values_.size());
    return row(row_begin_.size() - 2);
  }

  std::size_t ranks() const { return row_begin_.empty() ? 0 : row_begin_.size() - 1; }

  std::span<T> operator[](std::size_t rank) { return row(rank); }
  std::span<const T> operator[](std::size_t rank) const {
    return {values_.data() + row_begin_[rank], row_begin_[rank + 1] - row_begin_[rank]};
  }
  /// Bounds-checked entry (for callers that take indices from outside the engine).
  const T& at(std::size_t rank, std::size_t index) const {
    AMAX_CHECK(rank < ranks() && index < row_begin_[rank + 1] - row_begin_[rank], "per-rank table index out of range");
    return values_[row_begin_[rank] + index];
  }

 private:
  std::span<T> row(std::size_t rank) {
    return {values_.data() + row_begin_[rank], row_begin_[rank + 1] - row_begin_[rank]};
  }

  std::vector<std::size_t> row_begin_;  ///< rank r's row is [row_begin_[r], row_begin_[r + 1])
  std::vector<T> values_;
};

}  // namespace amaxcheck
