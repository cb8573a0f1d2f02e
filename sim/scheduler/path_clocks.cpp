#include "scheduler/path_clocks.h"

#include <algorithm>

namespace amaxcheck::sched {

PathClocks::PathClocks(std::pmr::memory_resource* memory)
    : actor_index_(memory),
      last_of_actor_(memory),
      object_index_(memory),
      objects_(memory),
      links_(memory),
      steps_(memory),
      access_arena_(memory),
      clock_arena_(memory),
      predecessors_(memory),
      needed_(memory) {}

void PathClocks::reserve(std::size_t steps) {
  // About four touches per step, each a new object at most; a handful of actors.
  constexpr std::size_t touches_per_step = 4, actors = 16;
  actor_index_.reserve(actors);
  last_of_actor_.reserve(actors);
  object_index_.reserve(steps * touches_per_step);
  objects_.reserve(steps * touches_per_step);
  links_.reserve(steps * touches_per_step);
  steps_.reserve(steps);
  access_arena_.reserve(steps * touches_per_step);
  clock_arena_.reserve(steps * actors);
  predecessors_.reserve(actors);
  needed_.reserve(actors);
}

std::uint32_t PathClocks::dense_id(Index& index, std::uint64_t key, bool& fresh) {
  auto it = std::lower_bound(index.begin(), index.end(), key, [](const auto& e, std::uint64_t k) { return e.first < k; });
  fresh = it == index.end() || it->first != key;
  if (fresh) it = index.insert(it, {key, static_cast<std::uint32_t>(index.size())});
  return it->second;
}

std::uint32_t PathClocks::actor_id(std::uint64_t actor_key) {
  bool fresh = false;
  const std::uint32_t id = dense_id(actor_index_, actor_key, fresh);
  if (fresh) last_of_actor_.push_back(-1);
  return id;
}

std::uint32_t PathClocks::object_id(std::uint64_t key) {
  bool fresh = false;
  const std::uint32_t id = dense_id(object_index_, key, fresh);
  if (fresh) objects_.emplace_back();
  return id;
}

void PathClocks::truncate(std::size_t steps) {
  if (steps >= steps_.size()) return;
  steps_.resize(steps);
  access_arena_.resize(steps == 0 ? 0 : steps_.back().access_begin + steps_.back().access_count);
  clock_arena_.resize(steps == 0 ? 0 : steps_.back().clock_begin + steps_.back().clock_size);
  std::fill(objects_.begin(), objects_.end(), Object{});
  links_.clear();
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
  const std::span<const Access> accesses(access_arena_.data() + s.access_begin, s.access_count);
  // Reads first: a step that reads and writes an object leaves it written.
  for (const Access& a : accesses) {
    if (a.write) continue;
    Object& o = objects_[a.object];
    links_.push_back(Link{step, o.reads});
    o.reads = static_cast<std::int64_t>(links_.size() - 1);
  }
  for (const Access& a : accesses) {
    if (!a.write) continue;
    Object& o = objects_[a.object];
    o.last_write = static_cast<std::int64_t>(step);
    o.reads = -1;
    if (o.writes < 0 || links_[static_cast<std::size_t>(o.writes)].step != step) {
      links_.push_back(Link{step, o.writes});
      o.writes = static_cast<std::int64_t>(links_.size() - 1);
    }
  }
  last_of_actor_[s.actor] = static_cast<std::int64_t>(step);
}

void PathClocks::push(std::uint32_t actor, std::span<const Touch> touches, std::pmr::vector<std::size_t>& races) {
  const std::size_t j = steps_.size();
  StepClock s;
  s.actor = actor;
  s.access_begin = access_arena_.size();
  s.access_count = static_cast<std::uint32_t>(touches.size());
  for (const Touch& t : touches) access_arena_.push_back(Access{object_id(t.object), t.write});
  const std::span<const Access> accesses(access_arena_.data() + s.access_begin, s.access_count);
  // Every dependent earlier step happens before one of these (same actor, or the last
  // conflicting accesses of each touched object), so they are the immediate candidates.
  std::pmr::vector<std::size_t>& preds = predecessors_;
  preds.clear();
  needed_.clear();
  if (last_of_actor_[actor] >= 0) preds.push_back(static_cast<std::size_t>(last_of_actor_[actor]));
  for (std::size_t t = 0; t < touches.size(); ++t) {
    const Object& o = objects_[accesses[t].object];
    if (o.last_write >= 0) {
      preds.push_back(static_cast<std::size_t>(o.last_write));
      if (touches[t].needs) needed_.push_back(static_cast<std::size_t>(o.last_write));
    }
    if (!touches[t].write) continue;
    for (std::int64_t r = o.reads; r >= 0; r = links_[static_cast<std::size_t>(r)].next) {
      preds.push_back(links_[static_cast<std::size_t>(r)].step);
    }
  }
  std::sort(preds.begin(), preds.end());
  preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
  s.count = last_of_actor_[actor] >= 0 ? steps_[static_cast<std::size_t>(last_of_actor_[actor])].count + 1 : 1;
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
  // Writes that could have followed a synchronization instead (see the header), newest first.
  const std::int64_t previous = last_of_actor_[actor];
  for (std::size_t t = 0; t < touches.size(); ++t) {
    if (touches[t].write || !touches[t].disables) continue;
    const Object& o = objects_[accesses[t].object];
    for (std::int64_t l = o.writes; l >= 0; l = links_[static_cast<std::size_t>(l)].next) {
      const std::size_t w = links_[static_cast<std::size_t>(l)].step;
      if (previous >= 0 && happens_before(w, static_cast<std::size_t>(previous))) break;  // so are the earlier ones
      if (steps_[w].actor != actor && std::find(races.begin(), races.end(), w) == races.end()) races.push_back(w);
    }
  }
  steps_.push_back(s);
  record_accesses(j);
}

}  // namespace amaxcheck::sched
