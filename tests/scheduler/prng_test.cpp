#include "scheduler/prng.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace amaxcheck::sched {
namespace {

std::vector<std::uint64_t> draw(Prng prng, int n) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(prng.next());
  return out;
}

TEST(Prng, the_same_seed_gives_the_same_sequence) { EXPECT_EQ(draw(Prng(42), 100), draw(Prng(42), 100)); }

TEST(Prng, different_seeds_give_different_sequences) { EXPECT_NE(draw(Prng(42), 8), draw(Prng(43), 8)); }

TEST(Prng, the_sequence_is_pinned_across_platforms) {
  // xoshiro256** seeded by SplitMix64 is fully specified; these values must never change,
  // or every recorded seed in the wild replays differently.
  Prng prng(0);
  const std::uint64_t first = prng.next();
  const std::uint64_t second = prng.next();
  std::uint64_t state = 0;
  std::uint64_t s[4];
  for (auto& w : s) w = splitmix64(state);
  auto rotl = [](std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  EXPECT_EQ(first, rotl(s[1] * 5, 7) * 9);
  EXPECT_NE(first, second);
  EXPECT_EQ(splitmix64(state = 0), 0xe220a8397b1dcdafULL) << "SplitMix64 reference value for seed 0";
}

TEST(Prng, split_children_are_independent_of_later_parent_draws) {
  Prng a(7);
  Prng child_a = a.split();
  Prng b(7);
  Prng child_b = b.split();
  b.next();  // the parent moves on; the child already split off must not notice
  EXPECT_EQ(draw(child_a, 50), draw(child_b, 50));
  EXPECT_NE(draw(child_a, 8), draw(a, 8)) << "a child does not repeat its parent";
}

TEST(Prng, consecutive_splits_differ) {
  Prng parent(9);
  Prng first = parent.split();
  Prng second = parent.split();
  EXPECT_NE(draw(first, 8), draw(second, 8));
}

TEST(Prng, below_stays_in_range_and_hits_every_value) {
  Prng prng(1);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t v = prng.below(7);
    ASSERT_LT(v, 7u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
}

TEST(Prng, below_is_roughly_uniform) {
  Prng prng(3);
  std::vector<int> counts(10, 0);
  const int n = 100000;
  for (int i = 0; i < n; ++i) ++counts[prng.below(10)];
  for (int c : counts) {
    EXPECT_GT(c, n / 10 - 600);
    EXPECT_LT(c, n / 10 + 600);
  }
}

TEST(Prng, chance_is_an_integer_ratio) {
  Prng prng(5);
  int hits = 0;
  for (int i = 0; i < 30000; ++i) hits += prng.chance(1, 3) ? 1 : 0;
  EXPECT_NEAR(hits, 10000, 500);
  EXPECT_FALSE(Prng(5).chance(0, 3));
  EXPECT_TRUE(Prng(5).chance(3, 3));
}

TEST(Prng, mix_seed_separates_runs) {
  EXPECT_EQ(mix_seed(1, 2), mix_seed(1, 2));
  EXPECT_NE(mix_seed(1, 2), mix_seed(1, 3));
  EXPECT_NE(mix_seed(1, 2), mix_seed(2, 2));
}

}  // namespace
}  // namespace amaxcheck::sched
