#pragma once
/// A block of memory that one thread's searches borrow one after another.
///
/// An exhaustive search takes its lists from one monotonic block sized for its scenario's run
/// length (exhaustive_strategy.h). Allocating that block anew for every search costs more than
/// a whole search of a small scenario: it is a large request, so glibc first consolidates every
/// freed small chunk (malloc_consolidate), and a worker's runs free many. Each thread instead
/// keeps one spare block: a search borrows it (growing it if too small) and gives it back when
/// it ends, so a thread running search after search (a test suite, a benchmark, a sweep)
/// allocates once. A second search alive on the same thread at the same time gets a block of
/// its own, so borrowing is always safe.

#include <cstddef>
#include <memory>

namespace amaxcheck::sched {

class ThreadBlock {
 public:
  /// Borrows this thread's spare block if it is free and holds at least `bytes`; otherwise
  /// allocates one of `bytes`.
  explicit ThreadBlock(std::size_t bytes);
  /// Gives the block back as this thread's spare (keeping the larger of it and the spare).
  ~ThreadBlock();
  ThreadBlock(const ThreadBlock&) = delete;
  ThreadBlock& operator=(const ThreadBlock&) = delete;

  std::byte* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
};

}  // namespace amaxcheck::sched
