#include "engine/vector_clock.h"

#include <algorithm>

namespace amaxcheck {
namespace {

/// Deltas longer than this are folded into a new base: a lookup stays cheap and a dense copy
/// happens at most once per this many raises.
constexpr std::size_t max_delta = 48;
/// How far up the base tree an ancestor test walks before giving up (and joining densely).
constexpr std::uint32_t max_walk = 64;

}  // namespace

VectorClock::VectorClock(std::size_t actors) : size_(actors) {
  auto base = std::make_shared<Base>();
  base->ticks.assign(actors, 0);
  base->zero = true;
  base_ = std::move(base);
}

Epoch VectorClock::operator[](ActorId actor) const {
  auto it = std::lower_bound(delta_.begin(), delta_.end(), actor, [](const Entry& e, ActorId a) { return e.first < a; });
  if (it != delta_.end() && it->first == actor) return it->second;
  return base_at(actor);
}

void VectorClock::raise(ActorId actor, Epoch epoch) {
  auto it = std::lower_bound(delta_.begin(), delta_.end(), actor, [](const Entry& e, ActorId a) { return e.first < a; });
  if (it != delta_.end() && it->first == actor) {
    it->second = std::max(it->second, epoch);
  } else if (epoch > base_at(actor)) {
    delta_.insert(it, Entry{actor, epoch});
  }
}

Epoch VectorClock::tick(ActorId actor) {
  const Epoch next = (*this)[actor] + 1;
  raise(actor, next);
  compact_if_large();
  return next;
}

bool VectorClock::descends(const std::shared_ptr<const Base>& base, const Base* ancestor) {
  std::shared_ptr<const Base> b = base;
  for (std::uint32_t steps = 0; b && steps <= max_walk; ++steps) {
    if (b.get() == ancestor) return true;
    if (b->depth <= (ancestor ? ancestor->depth : 0)) return false;
    b = b->parent.lock();
  }
  return false;
}

void VectorClock::rebase(const std::shared_ptr<const Base>& base) {
  // `base` dominates the current base: keep only the delta entries still ahead of it.
  base_ = base;
  std::erase_if(delta_, [&](const Entry& e) { return e.second <= base_->ticks[e.first]; });
}

void VectorClock::join(const VectorClock& other) {
  if (!other.base_) return;  // the empty clock adds nothing
  if (!base_) {
    *this = other;
    return;
  }
  size_ = std::max(size_, other.size_);
  if (base_ == other.base_ || other.base_->zero || descends(base_, other.base_.get())) {
    // Our base already dominates theirs: their delta is all they can add.
    for (const Entry& e : other.delta_) raise(e.first, e.second);
  } else if (base_->zero || descends(other.base_, base_.get())) {
    rebase(other.base_);
    for (const Entry& e : other.delta_) raise(e.first, e.second);
  } else {
    // Unrelated bases (e.g. two communicators' collectives): join densely into a new base. A
    // clock's value is the max of its base and its delta (every delta entry is ahead of the
    // base), so the join is the max of the two bases, raised by both deltas.
    auto merged = std::make_shared<Base>();
    merged->ticks.assign(size_, 0);
    const auto& mine = base_->ticks;
    const auto& theirs = other.base_->ticks;
    std::copy(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(std::min(mine.size(), size_)), merged->ticks.begin());
    const std::size_t both = std::min(theirs.size(), size_);
    for (std::size_t i = 0; i < both; ++i) merged->ticks[i] = std::max(merged->ticks[i], theirs[i]);
    for (const Entry& e : delta_) merged->ticks[e.first] = std::max(merged->ticks[e.first], e.second);
    for (const Entry& e : other.delta_) merged->ticks[e.first] = std::max(merged->ticks[e.first], e.second);
    const auto& deeper = base_->depth >= other.base_->depth ? base_ : other.base_;
    merged->parent = deeper;
    merged->depth = deeper->depth + 1;
    base_ = std::move(merged);
    delta_.clear();
    return;
  }
  compact_if_large();
}

void VectorClock::compact() {
  if (!base_ || delta_.empty()) return;
  auto next = std::make_shared<Base>();
  next->ticks = base_->ticks;
  for (const Entry& e : delta_) next->ticks[e.first] = e.second;
  next->parent = base_;
  next->depth = base_->depth + 1;
  base_ = std::move(next);
  delta_.clear();
}

void VectorClock::compact_if_large() {
  if (delta_.size() > max_delta) compact();
}

VectorClock VectorClock::join_all(const std::vector<const VectorClock*>& clocks) {
  VectorClock result;
  const VectorClock* first = clocks.front();
  if (!first->base_) return result;
  auto joined = std::make_shared<Base>();
  joined->ticks = first->base_->ticks;
  joined->parent = first->base_;
  joined->depth = first->base_->depth + 1;
  for (const VectorClock* c : clocks) {
    if (!c->base_) continue;
    if (c->base_ == first->base_ || c->base_->zero || descends(first->base_, c->base_.get())) {
      for (const Entry& e : c->delta_) joined->ticks[e.first] = std::max(joined->ticks[e.first], e.second);
    } else {
      // Dense: the max with its base, then with its delta (see join).
      const auto& ticks = c->base_->ticks;
      const std::size_t both = std::min(ticks.size(), joined->ticks.size());
      for (std::size_t i = 0; i < both; ++i) joined->ticks[i] = std::max(joined->ticks[i], ticks[i]);
      for (const Entry& e : c->delta_) joined->ticks[e.first] = std::max(joined->ticks[e.first], e.second);
    }
  }
  result.size_ = first->size_;
  result.base_ = std::move(joined);
  return result;
}

bool operator==(const VectorClock& a, const VectorClock& b) {
  const std::size_t n = std::max(a.size_, b.size_);
  for (std::size_t i = 0; i < n; ++i) {
    if (a[static_cast<ActorId>(i)] != b[static_cast<ActorId>(i)]) return false;
  }
  return true;
}

}  // namespace amaxcheck
