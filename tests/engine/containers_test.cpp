// The engine's two containers: Fifo (stream queues, launch order) and PerRank (per-rank tables).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/fifo.h"
#include "engine/per_rank.h"

namespace amaxcheck {
namespace {

std::vector<int> contents(const Fifo<int>& fifo) { return {fifo.begin(), fifo.end()}; }

TEST(Fifo, pops_in_push_order_across_compactions) {
  Fifo<int> fifo;
  int next_in = 0, next_out = 0;
  // Keep a few elements live while many pass through, so the popped prefix outgrows the live
  // part again and again (compaction) without the list ever emptying.
  for (int round = 0; round < 500; ++round) {
    fifo.push_back(next_in++);
    fifo.push_back(next_in++);
    ASSERT_EQ(fifo.front(), next_out);
    fifo.pop_front();
    ++next_out;
  }
  ASSERT_EQ(fifo.size(), static_cast<std::size_t>(next_in - next_out));
  for (std::size_t i = 0; i < fifo.size(); ++i) EXPECT_EQ(fifo[i], next_out + static_cast<int>(i));
  while (!fifo.empty()) {
    EXPECT_EQ(fifo.front(), next_out++);
    fifo.pop_front();
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(Fifo, emplace_back_returns_the_new_back_to_fill_in_place) {
  Fifo<std::pair<int, std::string>> fifo;
  fifo.emplace_back(1, "one");
  auto& second = fifo.emplace_back();
  second.first = 2;
  second.second = "two";
  fifo.pop_front();
  fifo.pop_front();
  // An emptied list starts again at its array's beginning; the reference is to the new back.
  auto& third = fifo.emplace_back(3, "three");
  third.second += "!";
  ASSERT_EQ(fifo.size(), 1u);
  EXPECT_EQ(fifo.front().first, 3);
  EXPECT_EQ(fifo.front().second, "three!");
}

TEST(Fifo, erase_removes_one_element_from_the_middle) {
  Fifo<int> fifo;
  for (int i = 0; i < 5; ++i) fifo.push_back(i);
  fifo.pop_front();
  fifo.erase(fifo.begin() + 1);  // the element 2
  EXPECT_EQ(contents(fifo), (std::vector<int>{1, 3, 4}));
}

TEST(Fifo, a_list_emptied_by_a_pop_or_an_erase_refills_from_its_first_slot) {
  Fifo<int> fifo;
  fifo.push_back(1);
  fifo.push_back(2);
  const int* const first_slot = &fifo.front();
  fifo.pop_front();
  fifo.erase(fifo.begin());  // the last element: the list is empty
  ASSERT_TRUE(fifo.empty());
  fifo.push_back(3);  // within the capacity: the array stays where it was
  EXPECT_EQ(&fifo.front(), first_slot);
  EXPECT_EQ(contents(fifo), (std::vector<int>{3}));
  fifo.push_back(4);
  fifo.pop_front();
  fifo.pop_front();  // emptied by pops
  fifo.push_back(5);
  EXPECT_EQ(&fifo.front(), first_slot);
  EXPECT_EQ(contents(fifo), (std::vector<int>{5}));
}

TEST(Fifo, a_popped_element_releases_what_it_held) {
  Fifo<std::shared_ptr<int>> fifo;
  auto held = std::make_shared<int>(7);
  fifo.push_back(held);
  fifo.push_back(std::make_shared<int>(8));
  EXPECT_EQ(held.use_count(), 2);
  fifo.pop_front();
  EXPECT_EQ(held.use_count(), 1);
  EXPECT_EQ(*fifo.front(), 8);
}

TEST(Fifo, clear_empties_and_the_list_refills_from_the_start) {
  Fifo<int> fifo;
  fifo.push_back(1);
  fifo.push_back(2);
  fifo.clear();
  EXPECT_TRUE(fifo.empty());
  fifo.push_back(3);
  EXPECT_EQ(contents(fifo), (std::vector<int>{3}));
}

// The front is a pointer into the list's own array: a copy, a move and an assignment must each
// pop from their own, whatever the source did after.
TEST(Fifo, copies_and_moves_pop_their_own_elements) {
  Fifo<int> fifo;
  for (int i = 0; i < 5; ++i) fifo.push_back(i);
  fifo.pop_front();
  Fifo<int> copy(fifo);
  fifo.pop_front();
  fifo.push_back(9);
  EXPECT_EQ(contents(copy), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(copy.front(), 1);
  Fifo<int> moved(std::move(copy));
  EXPECT_EQ(contents(moved), (std::vector<int>{1, 2, 3, 4}));
  moved.pop_front();
  EXPECT_EQ(moved.front(), 2);
  Fifo<int> assigned;
  assigned.push_back(7);
  assigned = fifo;
  fifo.pop_front();
  EXPECT_EQ(assigned.front(), 2);
  EXPECT_EQ(contents(assigned), (std::vector<int>{2, 3, 4, 9}));
  assigned = std::move(moved);
  EXPECT_EQ(contents(assigned), (std::vector<int>{2, 3, 4}));
  for (int i = 10; i < 100; ++i) assigned.push_back(i);  // grows: the array moves
  EXPECT_EQ(assigned.front(), 2);
  EXPECT_EQ(assigned[1], 3);
  EXPECT_EQ(assigned.size(), 93u);
}

TEST(PerRank, rows_keep_their_own_lengths_and_values) {
  PerRank<std::string> names;
  names.reserve(3, 4);
  auto first = names.add_row(2);
  first[0] = "a";
  first[1] = "b";
  names.add_row(0);
  names.add_row(2, "c");
  ASSERT_EQ(names.ranks(), 3U);
  EXPECT_EQ(names[0].size(), 2U);
  EXPECT_EQ(names[1].size(), 0U);
  EXPECT_EQ(names.at(0, 1), "b");
  EXPECT_EQ(names.at(2, 0), "c");
  EXPECT_EQ(names.at(2, 1), "c");
}

TEST(PerRank, at_refuses_an_index_outside_the_row) {
  PerRank<int> table;
  table.add_row(1, 5);
  table.add_row(0);
  EXPECT_EQ(table.at(0, 0), 5);
  EXPECT_ANY_THROW(table.at(1, 0));
  EXPECT_ANY_THROW(table.at(2, 0));
}

}  // namespace
}  // namespace amaxcheck
