#pragma once
/// A first-in first-out list in one contiguous array: a stream's queued ops, a rank's launch
/// order.
///
/// Why not std::deque: libstdc++'s deque allocates its map and a 512-byte node even when empty,
/// and frees a node each time the head leaves one, so every engine (one per worker) and every
/// stream that drains and refills pays allocations a run of a small scenario is mostly made of.
/// Here popping the front only moves an index; the array is reused from its start once the
/// list empties (a pop or erase that empties it clears it), and compacted when the popped part
/// outgrows the live one, so memory stays proportional to the longest the list has been and
/// reset() (clear) keeps it.

#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

namespace amaxcheck {

template <typename T>
class Fifo {
 public:
  using iterator = typename std::vector<T>::iterator;
  using const_iterator = typename std::vector<T>::const_iterator;

  // The front is kept as a pointer too (front_): a stream queue's front and emptiness are asked
  // several times a step, and from the index each is a multiply by the element's size.
  Fifo() = default;
  /// Copies and moves point the front into their own array.
  Fifo(const Fifo& other) : items_(other.items_), head_(other.head_), front_(items_.data() + head_) {}
  Fifo(Fifo&& other) noexcept : items_(std::move(other.items_)), head_(other.head_), front_(items_.data() + head_) {
    other.clear();
  }
  Fifo& operator=(const Fifo& other) {
    if (this != &other) {
      items_ = other.items_;
      head_ = other.head_;
      front_ = items_.data() + head_;
    }
    return *this;
  }
  Fifo& operator=(Fifo&& other) noexcept {
    if (this != &other) {
      items_ = std::move(other.items_);
      head_ = other.head_;
      front_ = items_.data() + head_;
      other.clear();
    }
    return *this;
  }
  ~Fifo() = default;

  bool empty() const { return front_ == items_.data() + items_.size(); }
  std::size_t size() const { return items_.size() - head_; }

  T& front() { return *front_; }
  const T& front() const { return *front_; }
  T& operator[](std::size_t i) { return front_[i]; }
  const T& operator[](std::size_t i) const { return front_[i]; }

  iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  const_iterator end() const { return items_.end(); }

  // An empty list starts at its array's beginning already (every way to empty it clears it), so
  // a push does not ask: whether a stream is empty when an op is issued onto it follows the
  // schedule, and that branch was a misprediction at many issues of a random run (issue 19).
  void push_back(T item) {
    items_.push_back(std::move(item));
    front_ = items_.data() + head_;  // the push may have moved the array
  }
  /// Returns the new back, to fill in place.
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    T& back = items_.emplace_back(std::forward<Args>(args)...);
    front_ = items_.data() + head_;
    return back;
  }

  /// Drops the front. Its slot is released so what it held does not linger: by assigning T{}
  /// where the element owns something (a string, a shared pointer); plain data (a queued op, a
  /// launch-order entry) is left as it is. A pop that empties the list clears it, which destroys
  /// every slot anyway.
  [[gnu::always_inline]] void pop_front() {  // inlined: a call's register saves were a third of a pop
    ++head_;
    T& popped = *front_++;
    if (empty()) {
      clear();
      return;
    }
    if constexpr (!std::is_trivially_destructible_v<T>) popped = T{};
    if (head_ >= 32 && head_ > size()) compact();
  }

  /// Removes one element anywhere (rare: a launch order whose middle completed first). The
  /// elements after it move down a place, so the front stays where it is. Removing the last one
  /// clears the list, as a pop does.
  void erase(const_iterator at) {
    items_.erase(at);
    if (empty()) clear();
  }

  /// Empties the list, keeping its memory.
  void clear() {
    items_.clear();
    head_ = 0;
    front_ = items_.data();
  }

 private:
  void compact() {
    items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
    front_ = items_.data();
  }

  std::vector<T> items_;
  std::size_t head_ = 0;  ///< index of the front in items_
  T* front_ = nullptr;    ///< items_.data() + head_
};

}  // namespace amaxcheck
