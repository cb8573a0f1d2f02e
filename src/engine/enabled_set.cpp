// The enabled list, kept step by step: which lanes a step can change, and the rank blocks and
// completions of Engine::enabled() rewritten only where one did. The lane conditions
// (host_op_ready, may_join, head_ready) live here, beside their one caller, so they inline into
// it; a communicator's (rendezvous_ready) is engine.cpp's.
#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

#include "engine/engine.h"
#include "engine/engine_state.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

/// The conditions of enabledness of a rank's lanes: a host op's, a comm op at the head of
/// `queue` joining, a stream head running.
bool host_op_ready(const Engine::State& st, RankId r, const Op& op) {
  const RankState& rank = st.ranks[r];
  switch (op.kind) {
    case OpKind::stream_synchronize: return rank.streams[op.stream].queue.empty();
    case OpKind::event_synchronize: {
      const auto& rec = rank.latest_record[op.event];
      return !rec || rec->done;
    }
    case OpKind::device_synchronize:
      for (const auto& s : rank.streams) {
        if (!s.queue.empty()) return false;
      }
      return true;
    case OpKind::host_wait: return rank.flag_signals[op.flag].size() >= op.count;
    default: return true;
  }
}

/// A comm op at the head of a stream may join: NCCL's per-comm order, and under serialized
/// kernels the device's launch order. A send/recv group reaches its stream whole, at its last
/// issue (ThreadState::held), so its head never waits for the rest of it.
bool may_join(const Engine::State& st, RankId r, const Fifo<QueuedOp>& queue) {
  const RankState& rank = st.ranks[r];
  const QueuedOp& q = queue.front();
  if (st.options.mutant != Mutant::drop_comm_ordering) {
    if (rank.per_comm[q.op->comm].ops_done != q.order) return false;
  }
  if (st.scenario.kernels == KernelConcurrency::serialized) {
    AMAX_CHECK(!rank.uncompleted.empty(), "a queued collective is missing from the launch order");
    if (rank.uncompleted.front() != std::make_pair(q.op->comm, q.order)) return false;
  }
  return true;
}

bool head_ready(const Engine::State& st, RankId r, const QueuedOp& q) {
  switch (q.op->kind) {
    case OpKind::stream_wait_event:
    case OpKind::work_wait:
      return st.options.mutant == Mutant::ignore_event_waits || !q.record || q.record->done;
    default: return true;
  }
  (void)r;
}


/// Whether thread lane `lane` of rank `r` may issue now / what stream lane `lane` may do now
/// (none: nothing). Inlined into refresh_rank, which asks them a few times a step: a call's
/// register saves were a fifth of its cost.
[[gnu::always_inline]] inline bool thread_lane_ready(const Engine::State& st, RankId r, std::uint32_t lane) {
  const LaneRef& ref = st.lane_refs[r][lane];
  const std::uint32_t pc = ref.thread->pc;
  if (pc >= ref.program_size) return false;
  const Op& op = ref.program[pc];
  return !is_host_op(op.kind) || host_op_ready(st, r, op);
}
enum class StreamLane : std::uint8_t { none, execute, join };
[[gnu::always_inline]] inline StreamLane stream_lane_action(const Engine::State& st, RankId r, std::uint32_t lane) {
  const Fifo<QueuedOp>& queue = *st.lane_refs[r][lane].queue;
  if (queue.empty()) return StreamLane::none;
  const QueuedOp& head = queue.front();
  if (is_comm_op(head.op->kind)) return head.joined || !may_join(st, r, queue) ? StreamLane::none : StreamLane::join;
  return head_ready(st, r, head) ? StreamLane::execute : StreamLane::none;
}

/// The action lane `lane` of rank `r` has now (threads first, then streams), if any.
bool lane_action(const Engine::State& st, RankId r, std::uint32_t lane, Action& out) {
  const LaneRef& ref = st.lane_refs[r][lane];
  if (ref.thread) {
    if (!thread_lane_ready(st, r, lane)) return false;
    out = Action{ActionKind::issue, r, lane};
    return true;
  }
  const StreamLane action = stream_lane_action(st, r, lane);
  if (action == StreamLane::none) return false;
  out = Action{action == StreamLane::join ? ActionKind::join : ActionKind::execute, r, ref.stream};
  return true;
}

std::uint32_t lane_count(const Engine::State& st, RankId r) { return static_cast<std::uint32_t>(st.lane_refs[r].size()); }

/// The enabled actions of one rank in lane order, written from `out` on (room for one per
/// lane); returns how many.
std::size_t rank_actions(const Engine::State& st, RankId r, Action* out) {
  Action* next = out;
  const std::uint32_t lanes = lane_count(st, r);
  for (std::uint32_t lane = 0; lane < lanes; ++lane) {
    if (lane_action(st, r, lane, *next)) ++next;
  }
  return static_cast<std::size_t>(next - out);
}

/// Lane bits of one rank's actions (LaneBits).
Engine::State::LaneBits bits_of(const Action* actions, std::size_t count, std::uint32_t threads) {
  Engine::State::LaneBits bits;
  for (std::size_t i = 0; i < count; ++i) {
    const Action& a = actions[i];
    const std::uint32_t lane = a.kind == ActionKind::issue ? a.lane : threads + a.lane;
    bits.enabled |= std::uint64_t{1} << lane;
    if (a.kind == ActionKind::join) bits.join |= std::uint64_t{1} << lane;
  }
  return bits;
}

/// Canonical order: rank actions rank by rank, then completes by communicator.
bool before_rank(const Action& a, RankId r) { return a.kind != ActionKind::complete && a.rank < r; }
bool before_comm(const Action& a, CommId c) { return a.kind != ActionKind::complete || a.lane < c; }

/// The set bits of `x`, without branches. Not std::popcount: without a popcnt instruction in the
/// target (a build for any x86-64) that is a libgcc call.
std::uint32_t bit_count(std::uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<std::uint32_t>((x * 0x0101010101010101ull) >> 56);
}

/// Ranks below this many have their block of the enabled list found by counting the actions of
/// the ranks before it (a bit count each, no branch that depends on the list), ranks from it on
/// by a binary search of the list.
constexpr RankId counted_ranks = 8;

/// Where rank r's block of the enabled list starts, where lane bits are kept (lane_bits_ok): the
/// list holds every rank's actions in rank order, each rank's as its bits say.
std::size_t block_start(const Engine::State& st, RankId r) {
  if (r < counted_ranks) {
    std::size_t start = 0;
    for (RankId q = 0; q < r; ++q) start += bit_count(st.lane_bits[q].enabled);
    return start;
  }
  const auto& en = st.enabled;
  return static_cast<std::size_t>(std::partition_point(en.begin(), en.end(), [&](const Action& a) { return before_rank(a, r); }) - en.begin());
}

/// Replaces the `old_size` actions of the enabled list from `at` on (a rank's block) with `count`
/// actions from `fresh`.
void replace_actions(Engine::State& st, std::size_t at, std::size_t old_size, const Action* fresh, std::size_t count) {
  static_assert(std::is_trivially_copyable_v<Action>);
  auto& en = st.enabled;
  const std::size_t tail = en.size() - at - old_size;
  if (count == old_size && std::equal(en.data() + at, en.data() + at + old_size, fresh)) return;
  // The list's tail (every later rank's actions) moves once, by the difference, not out and back.
  if (count > old_size) en.resize(en.size() + (count - old_size));  // may move the list
  Action* const block = en.data() + at;
  if (count != old_size) std::memmove(block + count, block + old_size, tail * sizeof(Action));
  if (count < old_size) en.resize(en.size() - (old_size - count));
  std::copy(fresh, fresh + count, block);
}

/// Replaces rank r's block of the enabled list with `count` actions from `fresh`, the block found
/// in the list (where lane bits are not kept).
void replace_block(Engine::State& st, RankId r, const Action* fresh, std::size_t count) {
  const Action* const first = st.enabled.data();
  const Action* const last = first + st.enabled.size();
  const Action* lo = std::partition_point(first, last, [&](const Action& a) { return before_rank(a, r); });
  // The block is at most one action per lane of the rank: walked, not searched.
  const Action* hi = lo;
  while (hi != last && hi->kind != ActionKind::complete && hi->rank == r) ++hi;
  replace_actions(st, static_cast<std::size_t>(lo - first), static_cast<std::size_t>(hi - lo), fresh, count);
}

/// The action of enabled lane `lane` of rank r, from its bits (LaneBits).
Action lane_bits_action(RankId r, std::uint32_t lane, const Engine::State::LaneBits& bits, std::uint32_t threads) {
  if (lane < threads) return Action{ActionKind::issue, r, lane};
  const bool join = (bits.join >> lane & 1) != 0;
  return Action{join ? ActionKind::join : ActionKind::execute, r, lane - threads};
}

/// Exactly one bit set. Not std::has_single_bit: that is a popcount, a libgcc call on a build
/// for any x86-64.
bool one_bit(std::uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

/// Rank r's block of the enabled list after a step that changed one lane (`bit`, set in
/// `flipped` when the lane's action appeared or disappeared, else it changed between execute and
/// join). `bits` are the rank's new bits; the lanes below `bit` have the bits they had. A block
/// holds its rank's actions in lane order, so the lane's action sits after those of the lower
/// lanes: one insert, erase or overwrite there patches the list.
void patch_lane(Engine::State& st, RankId r, std::uint64_t bit, std::uint64_t flipped, const Engine::State::LaneBits& bits,
                std::uint32_t threads) {
  auto& en = st.enabled;
  const Action action = lane_bits_action(r, static_cast<std::uint32_t>(std::countr_zero(bit)), bits, threads);
  const auto at = en.begin() + static_cast<std::ptrdiff_t>(block_start(st, r) + bit_count(bits.enabled & (bit - 1)));
  if (flipped == 0) {
    *at = action;
  } else if ((bits.enabled & bit) != 0) {
    en.insert(at, action);
  } else {
    en.erase(at);
  }
}

/// An action's place in the canonical order, as one number: completes after every rank action,
/// by communicator; a rank's issues (by thread) before its stream actions (by stream).
std::uint64_t canonical_key(const Action& a) {
  if (a.kind == ActionKind::complete) return std::uint64_t{1} << 63 | a.lane;
  return std::uint64_t{a.rank} << 33 | std::uint64_t{a.kind != ActionKind::issue} << 32 | a.lane;
}

}  // namespace

bool in_enabled(const Engine::State& st, const Action& action) {
  const auto& en = st.enabled;
  // A few actions (a handful of ranks) are scanned; a longer list is searched.
  if (en.size() <= 16) return std::find(en.begin(), en.end(), action) != en.end();
  const std::uint64_t key = canonical_key(action);
  const auto at = std::partition_point(en.begin(), en.end(), [&](const Action& a) { return canonical_key(a) < key; });
  return at != en.end() && *at == action;
}

namespace {

/// Rank r's bits and block of the enabled list, after a step that moved its bits from `old` to
/// `bits`. Inlined into refresh_rank: the steps that leave their lane as it was no longer call
/// it (Applier::kept in engine_apply.cpp), and of those that do, most move a bit.
[[gnu::always_inline]] inline void rewrite_rank(Engine::State& st, RankId r, const Engine::State::LaneBits old,
                                                const Engine::State::LaneBits bits) {
  st.lane_bits[r] = bits;
  const auto threads = static_cast<std::uint32_t>(st.ranks[r].threads.size());
  // Most of the rest turn one lane on or off, or turn a stream's execute into a join (or back):
  // patched where that lane's action sits, without rewriting the block.
  const std::uint64_t flipped = old.enabled ^ bits.enabled;
  const std::uint64_t rejoined = (old.join ^ bits.join) & ~flipped;  // still enabled, kind changed
  if ((one_bit(flipped) && rejoined == 0) || (flipped == 0 && one_bit(rejoined))) {
    patch_lane(st, r, flipped | rejoined, flipped, bits, threads);
    return;
  }
  Action* const fresh = st.fresh.data();
  Action* next = fresh;
  for (std::uint64_t rest = bits.enabled; rest != 0; rest &= rest - 1) {
    *next++ = lane_bits_action(r, static_cast<std::uint32_t>(std::countr_zero(rest)), bits, threads);
  }
  replace_actions(st, block_start(st, r), bit_count(old.enabled), fresh, static_cast<std::size_t>(next - fresh));
}

}  // namespace

void refresh_rank(Engine::State& st, RankId r, std::uint64_t lanes) {
  if (!st.lane_bits_ok) {
    Action* fresh = st.fresh.data();
    replace_block(st, r, fresh, rank_actions(st, r, fresh));
    return;
  }
  // Only the lanes the step could change are asked again; the others keep their bits. A step's
  // own lanes are the rank's; all_lanes is cut to them here.
  if (lanes == all_lanes) {
    const std::uint32_t count = lane_count(st, r);
    if (count < 64) lanes = (std::uint64_t{1} << count) - 1;
  }
  const Engine::State::LaneBits old = st.lane_bits[r];
  Engine::State::LaneBits bits = old;
  // Threads, then streams: two loops, so that no lane asks which of the two it is.
  const std::uint64_t thread_bits = lanes_below(st.ranks[r].threads.size());
  for (std::uint64_t rest = lanes & thread_bits; rest != 0; rest &= rest - 1) {
    const auto lane = static_cast<std::uint32_t>(std::countr_zero(rest));
    const std::uint64_t bit = std::uint64_t{1} << lane;
    bits.enabled = thread_lane_ready(st, r, lane) ? bits.enabled | bit : bits.enabled & ~bit;
  }
  for (std::uint64_t rest = lanes & ~thread_bits; rest != 0; rest &= rest - 1) {
    const auto lane = static_cast<std::uint32_t>(std::countr_zero(rest));
    const std::uint64_t bit = std::uint64_t{1} << lane;
    const StreamLane action = stream_lane_action(st, r, lane);
    bits.enabled = action != StreamLane::none ? bits.enabled | bit : bits.enabled & ~bit;
    bits.join = action == StreamLane::join ? bits.join | bit : bits.join & ~bit;
  }
  // Most steps leave the rank's actions as they were (a kernel ran, the next one is ready).
  if (bits.enabled != old.enabled || bits.join != old.join) rewrite_rank(st, r, old, bits);
}

void refresh_comm(Engine::State& st, CommId c) {
  auto& en = st.enabled;
  auto lo = std::partition_point(en.begin(), en.end(), [&](const Action& a) { return before_comm(a, c); });
  const bool present = lo != en.end() && lo->kind == ActionKind::complete && lo->lane == c;
  const bool ready = rendezvous_ready(st, c);
  if (present && !ready) en.erase(lo);
  if (!present && ready) en.insert(lo, Action{ActionKind::complete, 0, c});
}

const std::vector<Action>& Engine::build_enabled() const {
  State& st = *state_;
  if (!st.enabled_valid) {
    st.enabled.clear();
    for (RankId r = 0; r < st.scenario.ranks.size(); ++r) {
      const std::size_t count = rank_actions(st, r, st.fresh.data());
      if (st.lane_bits_ok) st.lane_bits[r] = bits_of(st.fresh.data(), count, static_cast<std::uint32_t>(st.ranks[r].threads.size()));
      st.enabled.insert(st.enabled.end(), st.fresh.begin(), st.fresh.begin() + static_cast<std::ptrdiff_t>(count));
    }
    for (CommId c = 0; c < st.scenario.comms.size(); ++c) {
      if (rendezvous_ready(st, c)) st.enabled.push_back({ActionKind::complete, 0, c});
    }
    st.enabled_valid = true;
  }
  enabled_ = &st.enabled;
  return st.enabled;
}

}  // namespace amaxcheck
