#include "engine/vector_clock.h"

#include <algorithm>

namespace amaxcheck {
namespace {

/// Deltas longer than this are folded into a new base: a lookup stays cheap and a dense copy
/// happens at most once per this many raises.
constexpr std::size_t max_delta = 48;
/// How many parent links an ancestor test follows before giving up (and joining densely).
constexpr std::uint32_t max_walk = 64;
/// The most parents a collective's base remembers: its members' distinct bases beyond this many
/// are still folded in, only not found again by a later ancestor test (a dense join instead).
constexpr std::size_t max_parents = 16;
/// The most dense joins a base remembers (Base::joins).
constexpr std::size_t max_joins = 8;

}  // namespace

VectorClock::VectorClock(std::size_t actors) : size_(actors) {
  if (actors > 0 && actors <= inline_actors) return;  // inline: small_ is already all zero
  auto base = std::make_shared<Base>();
  base->ticks.assign(actors, 0);
  base->zero = true;
  base_ = std::move(base);
}

void VectorClock::copy_shared(const VectorClock& other) {
  base_ = other.base_;
  delta_ = other.delta_;
}

VectorClock& VectorClock::assign_slow(const VectorClock& other) {
  if (this == &other) return *this;
  small_ = other.small_;
  base_ = other.base_;
  delta_ = other.delta_;
  size_ = other.size_;
  return *this;
}

Epoch VectorClock::large_at(ActorId actor) const {
  auto it = std::lower_bound(delta_.begin(), delta_.end(), actor, [](const Entry& e, ActorId a) { return e.first < a; });
  if (it != delta_.end() && it->first == actor) return it->second;
  return base_at(actor);
}

void VectorClock::make_large() {
  // A zero base with the inline epochs as its delta: the state a copy of a large root would
  // have reached (a zero base is dominated by every other, so joins treat both alike).
  auto base = std::make_shared<Base>();
  base->ticks.assign(size_, 0);
  base->zero = true;
  base_ = std::move(base);
  delta_.clear();
  for (std::size_t a = 0; a < inline_actors; ++a) {
    if (small_[a] > 0) delta_.emplace_back(static_cast<ActorId>(a), small_[a]);
  }
  small_.fill(0);
}

void VectorClock::raise(ActorId actor, Epoch epoch) {
  auto it = std::lower_bound(delta_.begin(), delta_.end(), actor, [](const Entry& e, ActorId a) { return e.first < a; });
  if (it != delta_.end() && it->first == actor) {
    it->second = std::max(it->second, epoch);
  } else if (epoch > base_at(actor)) {
    delta_.insert(it, Entry{actor, epoch});
  }
}

void VectorClock::advance_slow(ActorId actor, Epoch epoch) {
  if (!base_) make_large();  // an inline clock raising an actor beyond inline_actors
  raise(actor, epoch);
  compact_if_large();
}

Epoch VectorClock::tick_slow(ActorId actor) {
  if (!base_) make_large();  // an inline clock ticking an actor beyond inline_actors
  const Epoch next = (*this)[actor] + 1;
  raise(actor, next);
  compact_if_large();
  return next;
}

namespace {

/// Depth-first search of `base`'s ancestors for `ancestor`, spending one unit of `budget` per
/// parent link followed. Bases deeper than `ancestor` only are searched: no base descends from a
/// deeper one.
template <typename Base>
bool search_ancestors(const Base& base, const Base* ancestor, std::uint32_t& budget) {
  for (const auto& link : base.parents) {
    if (budget == 0) return false;
    --budget;
    const auto parent = link.lock();
    if (!parent) continue;
    if (parent.get() == ancestor) return true;
    if (parent->depth > ancestor->depth && search_ancestors(*parent, ancestor, budget)) return true;
  }
  return false;
}

}  // namespace

bool VectorClock::descends(const std::shared_ptr<const Base>& base, const Base* ancestor) {
  if (!base || !ancestor) return false;
  if (base.get() == ancestor) return true;
  if (base->depth <= ancestor->depth) return false;
  std::uint32_t budget = max_walk;
  return search_ancestors(*base, ancestor, budget);
}

void VectorClock::rebase(const std::shared_ptr<const Base>& base) {
  // `base` dominates the current base: keep only the delta entries still ahead of it.
  base_ = base;
  std::erase_if(delta_, [&](const Entry& e) { return e.second <= base_->ticks[e.first]; });
}

std::shared_ptr<const VectorClock::Base> VectorClock::merged(const std::shared_ptr<const Base>& a,
                                                             const std::shared_ptr<const Base>& b) {
  for (const auto& [other, join] : a->joins) {
    if (other.lock() == b) {
      if (auto found = join.lock()) return found;
    }
  }
  auto result = std::make_shared<Base>();
  const std::size_t size = std::max(a->ticks.size(), b->ticks.size());
  result->ticks.assign(size, 0);
  std::copy(a->ticks.begin(), a->ticks.end(), result->ticks.begin());
  for (std::size_t i = 0; i < b->ticks.size(); ++i) result->ticks[i] = std::max(result->ticks[i], b->ticks[i]);
  result->parents = {a, b};
  result->depth = std::max(a->depth, b->depth) + 1;
  // Expired entries go first; the list stays short (a base meets a few others).
  for (const Base* side : {a.get(), b.get()}) {
    auto& joins = side->joins;
    std::erase_if(joins, [](const auto& entry) { return entry.first.expired() || entry.second.expired(); });
    if (joins.size() >= max_joins) joins.erase(joins.begin());
  }
  a->joins.emplace_back(b, result);
  b->joins.emplace_back(a, result);
  return result;
}

void VectorClock::join_slow(const VectorClock& other) {
  if (!other.base_ && other.size_ == 0) return;  // the empty clock adds nothing
  if (!base_ && size_ == 0) {
    *this = other;
    return;
  }
  if (!base_ && !other.base_) {
    size_ = std::max(size_, other.size_);
    raise_to(small_, other.small_, size_);
    return;
  }
  if (!other.base_) {  // a wider clock meets an inline one: join its large form
    VectorClock wide = other;
    wide.make_large();
    join(wide);
    return;
  }
  if (!base_) make_large();
  // Clocks of different widths (an inline clock's large form meeting a wider one): both bases
  // must cover every actor either holds before the paths below index them.
  if (base_->ticks.size() < other.base_->ticks.size()) widen(other.base_->ticks.size());
  if (other.base_->ticks.size() < base_->ticks.size()) {
    VectorClock wide = other;
    wide.widen(base_->ticks.size());
    join(wide);
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
    // Unrelated bases (e.g. two communicators' collectives): the join's base is the max of the
    // two bases, shared by every clock that joins the same two; both deltas are then raised
    // onto it (a clock's value is the max of its base and its delta).
    std::vector<Entry> mine = std::move(delta_);
    delta_.clear();
    base_ = merged(base_, other.base_);
    for (const Entry& e : mine) raise(e.first, e.second);
    for (const Entry& e : other.delta_) raise(e.first, e.second);
  }
  compact_if_large();
}

void VectorClock::widen(std::size_t actors) {
  if (base_->ticks.size() >= actors) return;
  auto wider = std::make_shared<Base>(*base_);  // the same value, zero beyond the old width
  wider->ticks.resize(actors, 0);
  wider->parents = {base_};
  wider->depth = base_->depth + 1;
  wider->joins.clear();
  base_ = std::move(wider);
  size_ = std::max(size_, actors);
}

void VectorClock::compact() {
  if (!base_ || delta_.empty()) return;
  auto next = std::make_shared<Base>();
  next->ticks = base_->ticks;
  // A tick beyond the base's width (only an inline clock's large form can have one) widens it.
  next->ticks.resize(std::max<std::size_t>(next->ticks.size(), delta_.back().first + 1), 0);
  for (const Entry& e : delta_) next->ticks[e.first] = e.second;
  next->parents = {base_};
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
  if (!first->base_ && first->size_ == 0) return result;
  const bool inline_only = std::none_of(clocks.begin(), clocks.end(), [](const VectorClock* c) { return c->base_ != nullptr; });
  if (inline_only) {
    for (const VectorClock* c : clocks) {
      if (c->size_ == 0) continue;  // the empty clock adds nothing (as below)
      raise_to(result.small_, c->small_, c->size_);  // the result is zero beyond c's size too
    }
    result.size_ = first->size_;
    return result;
  }
  const bool mixed = std::any_of(clocks.begin(), clocks.end(), [](const VectorClock* c) { return c->is_small(); });
  if (mixed) {  // inline and wider clocks together (never within one engine): join large forms
    std::size_t actors = 0;
    for (const VectorClock* c : clocks) actors = std::max(actors, c->size_);
    std::vector<VectorClock> wide;
    wide.reserve(clocks.size());
    std::vector<const VectorClock*> all;
    for (const VectorClock* c : clocks) {
      wide.push_back(*c);
      if (wide.back().is_small()) wide.back().make_large();
      if (wide.back().base_) wide.back().widen(actors);
      all.push_back(&wide.back());
    }
    return join_all(all);
  }
  auto joined = std::make_shared<Base>();
  joined->ticks = first->base_->ticks;
  joined->parents = {first->base_};
  joined->depth = first->base_->depth + 1;
  // The bases the join already covers (folded in densely, or ancestors of the first): members
  // mostly share a few, those of the collectives they last completed, so each distinct base
  // costs one dense pass or one ancestor test, not one per member.
  std::vector<const Base*> covered{first->base_.get()};
  for (const VectorClock* c : clocks) {
    if (!c->base_) continue;
    const Base* base = c->base_.get();
    if (std::find(covered.begin(), covered.end(), base) == covered.end()) {
      const bool dominated = base->zero || descends(first->base_, base);
      if (!dominated) {
        // Dense: the max with its base, then with its delta (see join).
        const auto& ticks = base->ticks;
        const std::size_t both = std::min(ticks.size(), joined->ticks.size());
        for (std::size_t i = 0; i < both; ++i) joined->ticks[i] = std::max(joined->ticks[i], ticks[i]);
        if (joined->parents.size() < max_parents) {
          joined->parents.push_back(c->base_);
          joined->depth = std::max(joined->depth, base->depth + 1);
        }
      }
      if (covered.size() < 2 * max_parents) covered.push_back(base);
    }
    for (const Entry& e : c->delta_) joined->ticks[e.first] = std::max(joined->ticks[e.first], e.second);
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
