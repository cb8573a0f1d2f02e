// The unique-id exchange with an in-memory stand-in for the other process.
#include <gtest/gtest.h>

#include <cstring>

#include "cuda/bootstrap.h"

namespace amaxcheck::gpu {
namespace {

/// Plays a non-root process: its broadcast receives what the "root" had.
class FollowerExchange final : public IdExchange {
 public:
  explicit FollowerExchange(std::vector<char> root_bytes) : root_bytes_(std::move(root_bytes)) {}
  int rank() const override { return 1; }
  int size() const override { return 2; }
  void broadcast(void* data, std::size_t bytes, int root) override {
    ASSERT_EQ(root, 0);
    ASSERT_EQ(bytes, root_bytes_.size());
    std::memcpy(data, root_bytes_.data(), bytes);
  }

 private:
  std::vector<char> root_bytes_;
};

UniqueIdBytes id_filled_with(char c) {
  UniqueIdBytes id;
  id.fill(c);
  return id;
}

TEST(Bootstrap, the_single_process_makes_one_id_per_communicator) {
  SingleProcessExchange single;
  char next = 'a';
  const auto ids = share_unique_ids(single, 3, [&] { return id_filled_with(next++); });
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0][0], 'a');
  EXPECT_EQ(ids[2][unique_id_bytes - 1], 'c');
}

TEST(Bootstrap, a_follower_never_makes_ids_and_receives_the_roots) {
  std::vector<char> root(2 * unique_id_bytes, 'r');
  root[unique_id_bytes] = 's';
  FollowerExchange follower(root);
  const auto ids = share_unique_ids(follower, 2, []() -> UniqueIdBytes {
    ADD_FAILURE() << "only the root makes ids";
    return {};
  });
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0][5], 'r');
  EXPECT_EQ(ids[1][0], 's');
}

/// Plays process 1 of 3; the others' flags arrive by broadcast from their own roots.
class FlagExchange final : public IdExchange {
 public:
  explicit FlagExchange(std::vector<char> others) : others_(std::move(others)) {}
  int rank() const override { return 1; }
  int size() const override { return 3; }
  void broadcast(void* data, std::size_t bytes, int root) override {
    ASSERT_EQ(bytes, 1u);
    if (root != rank()) std::memcpy(data, &others_.at(static_cast<std::size_t>(root)), 1);
  }

 private:
  std::vector<char> others_;
};

TEST(Bootstrap, every_process_learns_which_processes_cannot_run) {
  FlagExchange exchange({1, 0, 0});
  EXPECT_EQ(share_flags(exchange, true), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(share_flags(exchange, false), (std::vector<bool>{true, false, false}));
  SingleProcessExchange single;
  EXPECT_EQ(share_flags(single, false), std::vector<bool>{false});
}

}  // namespace
}  // namespace amaxcheck::gpu
