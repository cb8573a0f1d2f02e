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

}  // namespace
}  // namespace amaxcheck::gpu
