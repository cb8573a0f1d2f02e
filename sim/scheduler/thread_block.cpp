#include "scheduler/thread_block.h"

#include <utility>

namespace amaxcheck::sched {
namespace {
/// This thread's spare block, or null while a search holds it.
struct Spare {
  std::unique_ptr<std::byte[]> data;
  std::size_t size = 0;
};
thread_local Spare spare;
}  // namespace

ThreadBlock::ThreadBlock(std::size_t bytes) {
  if (spare.data && spare.size >= bytes) {
    data_ = std::move(spare.data);
    size_ = spare.size;
    spare.size = 0;
    return;
  }
  data_ = std::make_unique_for_overwrite<std::byte[]>(bytes);
  size_ = bytes;
}

ThreadBlock::~ThreadBlock() {
  if (!spare.data || spare.size < size_) {
    spare.data = std::move(data_);
    spare.size = size_;
  }
}

}  // namespace amaxcheck::sched
