// VectorClock against a dense model: whatever shape its bases and deltas take (shared bases,
// compaction, dense joins of unrelated bases, a collective's join_all, one entry advanced), every
// clock reads as the pointwise maximum that plain arrays compute.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/vector_clock.h"

namespace amaxcheck::props {
namespace {

using Dense = std::vector<Epoch>;

void expect_equal(const VectorClock& clock, const Dense& model) {
  for (std::size_t a = 0; a < model.size(); ++a) RC_ASSERT(clock[static_cast<ActorId>(a)] == model[a]);
}

RC_GTEST_PROP(VectorClockModel, ticks_joins_and_collective_joins_read_as_pointwise_maxima, ()) {
  const auto actors = *rc::gen::inRange<std::size_t>(1, 200);
  const auto count = *rc::gen::inRange<std::size_t>(2, 8);
  const VectorClock root(actors);
  std::vector<VectorClock> clocks(count, root);
  std::vector<Dense> model(count, Dense(actors, 0));
  const auto steps = *rc::gen::inRange(1, 400);
  for (int s = 0; s < steps; ++s) {
    const auto i = *rc::gen::inRange<std::size_t>(0, count);
    const auto j = *rc::gen::inRange<std::size_t>(0, count);
    switch (*rc::gen::inRange(0, 7)) {
      case 0: {  // a burst of ticks, enough to overflow the delta now and then
        const auto a = *rc::gen::inRange<ActorId>(0, static_cast<ActorId>(actors));
        const auto n = *rc::gen::inRange(1, 60);
        for (int k = 0; k < n; ++k) {
          const ActorId actor = static_cast<ActorId>((a + static_cast<ActorId>(k) * 7) % actors);
          RC_ASSERT(clocks[i].tick(actor) == ++model[i][actor]);
        }
        break;
      }
      case 1:
        clocks[i].join(clocks[j]);
        for (std::size_t a = 0; a < actors; ++a) model[i][a] = std::max(model[i][a], model[j][a]);
        break;
      case 2: {  // a collective: every member takes the join of all
        std::vector<const VectorClock*> members;
        Dense all(actors, 0);
        for (std::size_t k = 0; k < count; ++k) {
          if (k != i && *rc::gen::inRange(0, 2) == 0) continue;
          members.push_back(&clocks[k]);
          for (std::size_t a = 0; a < actors; ++a) all[a] = std::max(all[a], model[k][a]);
        }
        const VectorClock joined = VectorClock::join_all(members);
        expect_equal(joined, all);
        for (std::size_t k = 0; k < count; ++k) {
          if (std::find(members.begin(), members.end(), &clocks[k]) == members.end()) continue;
          clocks[k].join(joined);
          model[k] = all;
        }
        break;
      }
      case 3:
        clocks[i].compact();
        break;
      case 4:  // every clock joins one (many waits on one record): clocks that share a base
               // meet the same other base, and the later ones reuse the first one's merge
        for (std::size_t k = 0; k < count; ++k) {
          clocks[k].join(clocks[j]);
          for (std::size_t a = 0; a < actors; ++a) model[k][a] = std::max(model[k][a], model[j][a]);
        }
        break;
      case 5: {  // one entry raised (an issued op's epoch, joined by the stream that runs it),
                 // to below, at or above what the clock holds
        const auto actor = *rc::gen::inRange<ActorId>(0, static_cast<ActorId>(actors));
        const Epoch epoch = model[i][actor] + *rc::gen::inRange<Epoch>(0, 3) - std::min<Epoch>(model[i][actor], 1);
        clocks[i].advance(actor, epoch);
        model[i][actor] = std::max(model[i][actor], epoch);
        break;
      }
      default:  // a snapshot (an issued op's clock) that later joins elsewhere
        clocks[i] = clocks[j];
        model[i] = model[j];
        break;
    }
    expect_equal(clocks[i], model[i]);
  }
  for (std::size_t k = 0; k < count; ++k) expect_equal(clocks[k], model[k]);
}

RC_GTEST_PROP(VectorClockModel, inline_clocks_joined_with_wider_ones_read_as_pointwise_maxima, ()) {
  // Clocks of at most inline_actors actors are inline; a join or join_all that meets a wider
  // clock takes the shared form. Engines never mix the two, but the value must not care.
  const auto narrow = *rc::gen::inRange<std::size_t>(1, VectorClock::inline_actors + 1);
  const auto wide = *rc::gen::inRange<std::size_t>(VectorClock::inline_actors + 1, 40);
  std::vector<VectorClock> clocks{VectorClock(narrow), VectorClock(narrow), VectorClock(wide), VectorClock(wide)};
  std::vector<Dense> model{Dense(wide, 0), Dense(wide, 0), Dense(wide, 0), Dense(wide, 0)};
  std::vector<std::size_t> sizes{narrow, narrow, wide, wide};
  const auto steps = *rc::gen::inRange(1, 200);
  for (int s = 0; s < steps; ++s) {
    const auto i = *rc::gen::inRange<std::size_t>(0, clocks.size());
    const auto j = *rc::gen::inRange<std::size_t>(0, clocks.size());
    switch (*rc::gen::inRange(0, 4)) {
      case 0: {
        const auto actor = *rc::gen::inRange<ActorId>(0, static_cast<ActorId>(sizes[i]));
        RC_ASSERT(clocks[i].tick(actor) == ++model[i][actor]);
        break;
      }
      case 1:
        clocks[i].join(clocks[j]);
        sizes[i] = std::max(sizes[i], sizes[j]);
        for (std::size_t a = 0; a < wide; ++a) model[i][a] = std::max(model[i][a], model[j][a]);
        break;
      case 2: {
        const VectorClock joined = VectorClock::join_all({&clocks[i], &clocks[j]});
        Dense all(wide, 0);
        for (std::size_t a = 0; a < wide; ++a) all[a] = std::max(model[i][a], model[j][a]);
        expect_equal(joined, all);
        break;
      }
      default:
        clocks[i] = clocks[j];
        model[i] = model[j];
        sizes[i] = sizes[j];
        break;
    }
    expect_equal(clocks[i], model[i]);
  }
  for (std::size_t k = 0; k < clocks.size(); ++k) expect_equal(clocks[k], model[k]);
}

TEST(VectorClock, an_inline_clock_copies_and_joins_by_value) {
  VectorClock a(4);
  a.tick(1);
  VectorClock b = a;  // a snapshot: later ticks of a do not reach it
  a.tick(1);
  a.tick(3);
  EXPECT_EQ(b[1], 1u);
  EXPECT_EQ(b[3], 0u);
  b.tick(0);
  b.join(a);
  EXPECT_EQ(b[0], 1u);
  EXPECT_EQ(b[1], 2u);
  EXPECT_EQ(b[3], 1u);
  EXPECT_TRUE(b.covers(1, 2));
  EXPECT_FALSE(b.covers(2, 1));
  VectorClock empty;
  empty.join(b);  // the empty placeholder takes the other's value
  EXPECT_EQ(empty, b);
  b.join(VectorClock{});  // and adds nothing
  EXPECT_EQ(b[1], 2u);
}

TEST(VectorClock, clocks_that_join_the_same_two_bases_share_the_merge_and_keep_their_own_entries) {
  // Two collectives over disjoint members give two unrelated bases; each member then ticks
  // its own actor. Members of the first that join one member of the second all merge the same
  // pair of bases (the second merge is the remembered one) and must each keep their own tick.
  const VectorClock root(VectorClock::inline_actors + 8);  // wide: clocks with shared bases
  std::vector<VectorClock> left(3, root), right(2, root);
  for (ActorId a = 0; a < 3; ++a) left[a].tick(a);
  for (ActorId a = 0; a < 2; ++a) right[a].tick(3 + a);
  const VectorClock left_all = VectorClock::join_all({&left[0], &left[1], &left[2]});
  const VectorClock right_all = VectorClock::join_all({&right[0], &right[1]});
  for (ActorId a = 0; a < 3; ++a) {
    left[a] = left_all;
    left[a].tick(a);  // epoch 2 on its own actor, ahead of the shared base
  }
  VectorClock other = right_all;
  other.tick(6);
  for (ActorId a = 0; a < 3; ++a) {
    left[a].join(other);
    for (ActorId b = 0; b < 8; ++b) {
      const Epoch expected = b == a ? 2 : b < 5 || b == 6 ? 1 : 0;
      EXPECT_EQ(left[a][b], expected) << "member " << a << ", actor " << b;
    }
  }
}

}  // namespace
}  // namespace amaxcheck::props
