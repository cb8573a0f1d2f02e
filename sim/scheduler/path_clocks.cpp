#include "scheduler/path_clocks.h"

#include <algorithm>

namespace amaxcheck::sched {

std::uint32_t PathClocks::actor_id(std::uint64_t actor_key) {
  auto [it, fresh] = ids_.try_emplace(actor_key, static_cast<std::uint32_t>(ids_.size()));
  if (fresh) last_of_actor_.push_back(-1);
  return it->second;
}

void PathClocks::truncate(std::size_t steps) {
  if (steps >= steps_.size()) return;
  steps_.resize(steps);
  touch_arena_.resize(steps == 0 ? 0 : steps_.back().touch_begin + steps_.back().touch_count);
  clock_arena_.resize(steps == 0 ? 0 : steps_.back().clock_begin + steps_.back().clock_size);
  for (auto& [key, o] : objects_) {
    o.last_write = -1;
    o.reads.clear();
    o.writes.clear();
  }
  std::fill(last_of_actor_.begin(), last_of_actor_.end(), -1);
  for (std::size_t i = 0; i < steps_.size(); ++i) record_accesses(i);
}

bool PathClocks::has_predecessor_in(std::size_t later, std::span<const std::uint32_t> first_in) const {
  const auto c = clock_of(later);
  const std::size_t n = std::min(c.size(), first_in.size());
  for (std::size_t a = 0; a < n; ++a) {
    if (first_in[a] != 0 && c[a] >= first_in[a]) return true;
  }
  return false;
}

void PathClocks::record_accesses(std::size_t step) {
  const StepClock& s = steps_[step];
  const std::span<const Touch> touches = touches_of(step);
  // Reads first: a step that reads and writes an object leaves it written.
  for (const Touch& t : touches) {
    if (!t.write) objects_[t.object].reads.push_back(step);
  }
  for (const Touch& t : touches) {
    if (!t.write) continue;
    Object& o = objects_[t.object];
    o.last_write = static_cast<std::int64_t>(step);
    o.reads.clear();
    if (o.writes.empty() || o.writes.back() != step) o.writes.push_back(step);
  }
  last_of_actor_[s.actor] = static_cast<std::int64_t>(step);
}

void PathClocks::push(std::uint64_t actor_key, std::span<const Touch> touches, std::vector<std::size_t>& races) {
  const std::uint32_t actor = actor_id(actor_key);
  const std::size_t j = steps_.size();
  // Every dependent earlier step happens before one of these (same actor, or the last
  // conflicting accesses of each touched object), so they are the immediate candidates.
  std::vector<std::size_t>& preds = predecessors_;
  preds.clear();
  needed_.clear();
  if (last_of_actor_[actor] >= 0) preds.push_back(static_cast<std::size_t>(last_of_actor_[actor]));
  for (const Touch& t : touches) {
    auto it = objects_.find(t.object);
    if (it == objects_.end()) continue;
    const Object& o = it->second;
    if (o.last_write >= 0) {
      preds.push_back(static_cast<std::size_t>(o.last_write));
      if (t.needs) needed_.push_back(static_cast<std::size_t>(o.last_write));
    }
    if (t.write) preds.insert(preds.end(), o.reads.begin(), o.reads.end());
  }
  std::sort(preds.begin(), preds.end());
  preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
  StepClock s;
  s.actor = actor;
  s.count = last_of_actor_[actor] >= 0 ? steps_[static_cast<std::size_t>(last_of_actor_[actor])].count + 1 : 1;
  s.touch_begin = touch_arena_.size();
  s.touch_count = static_cast<std::uint32_t>(touches.size());
  touch_arena_.insert(touch_arena_.end(), touches.begin(), touches.end());
  // The clock's size: the longest predecessor's, and at least this actor's entry.
  std::size_t clock_size = actor + std::size_t{1};
  for (const std::size_t p : preds) clock_size = std::max<std::size_t>(clock_size, steps_[p].clock_size);
  s.clock_begin = clock_arena_.size();
  s.clock_size = static_cast<std::uint32_t>(clock_size);
  clock_arena_.resize(clock_arena_.size() + clock_size, 0);
  std::uint32_t* clock = clock_arena_.data() + s.clock_begin;
  for (const std::size_t p : preds) {
    const auto c = clock_of(p);
    for (std::size_t a = 0; a < c.size(); ++a) clock[a] = std::max(clock[a], c[a]);
  }
  clock[actor] = s.count;
  // p races with j unless p happens before another predecessor (then a step lies between), or
  // j needed p to be enabled at all (the race cannot be reversed).
  for (const std::size_t p : preds) {
    if (steps_[p].actor == actor) continue;
    if (std::find(needed_.begin(), needed_.end(), p) != needed_.end()) continue;
    bool covered = false;
    for (const std::size_t q : preds) {
      if (q != p && happens_before(p, q)) {
        covered = true;
        break;
      }
    }
    if (!covered) races.push_back(p);
  }
  // Writes that could have followed a synchronization instead (see the header).
  const std::int64_t previous = last_of_actor_[actor];
  for (const Touch& t : touches) {
    if (t.write || !t.disables) continue;
    auto it = objects_.find(t.object);
    if (it == objects_.end()) continue;
    const auto& writes = it->second.writes;
    for (auto w = writes.rbegin(); w != writes.rend(); ++w) {
      if (previous >= 0 && happens_before(*w, static_cast<std::size_t>(previous))) break;  // so are the earlier ones
      if (steps_[*w].actor != actor && std::find(races.begin(), races.end(), *w) == races.end()) races.push_back(*w);
    }
  }
  steps_.push_back(std::move(s));
  record_accesses(j);
}

}  // namespace amaxcheck::sched
