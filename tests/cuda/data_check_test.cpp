// The data check's expected values, per collective, worked out by hand for small cases.
#include <gtest/gtest.h>

#include "cuda/data_check.h"
#include "model/builder.h"

namespace amaxcheck::gpu {
namespace {

TEST(DataCheck, all_reduce_max_expects_the_largest_member_value) {
  const CollectiveSignature sig{OpKind::all_reduce, 3, 3, ReduceOp::max, 0};
  // member j, element k: (k % 7) + j + 1; three members: max is k + 3.
  EXPECT_EQ(expected_output(sig, 1, 3), (std::vector<float>{3, 4, 5}));
}

TEST(DataCheck, all_reduce_sum_is_exact_small_integers) {
  const CollectiveSignature sig{OpKind::all_reduce, 2, 2, ReduceOp::sum, 0};
  EXPECT_EQ(expected_output(sig, 0, 2), (std::vector<float>{1 + 2, 2 + 3}));
}

TEST(DataCheck, all_gather_concatenates_members_in_rank_order) {
  const CollectiveSignature sig{OpKind::all_gather, 2, 4, ReduceOp::max, 0};
  EXPECT_EQ(recv_elements(sig, 2), 4u);
  EXPECT_EQ(expected_output(sig, 0, 2), (std::vector<float>{1, 2, 2, 3}));
}

TEST(DataCheck, reduce_scatter_gives_each_member_its_slice_of_the_reduction) {
  const CollectiveSignature sig{OpKind::reduce_scatter, 4, 2, ReduceOp::sum, 0};
  EXPECT_EQ(send_elements(sig, 2), 4u);
  // element k summed over two members: 2*(k%7) + 3; member 1 holds k = 2, 3.
  EXPECT_EQ(expected_output(sig, 1, 2), (std::vector<float>{7, 9}));
}

TEST(DataCheck, broadcast_copies_the_root_to_everyone) {
  const CollectiveSignature sig{OpKind::broadcast, 2, 2, ReduceOp::max, 1};
  EXPECT_EQ(expected_output(sig, 0, 2), pattern_input(sig, 1, 2));
}

TEST(DataCheck, signatures_come_from_the_first_member_without_duplicates) {
  ScenarioBuilder b;
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c = b.comm("dp", {r1, r0});
  const ThreadId t = b.thread(r1, "main");
  const StreamId s = b.stream(r1, "s");
  const BufferId buf = b.buffer(r1, "x", 4);
  b.op(r1, t, ScenarioBuilder::all_reduce(s, c, {buf, 0, 4}, {buf, 0, 4}));
  b.op(r1, t, ScenarioBuilder::all_reduce(s, c, {buf, 0, 4}, {buf, 0, 4}));
  b.op(r1, t, ScenarioBuilder::all_reduce(s, c, {buf, 0, 2}, {buf, 0, 2}, "sum", ReduceOp::sum));
  const auto sigs = signatures_of(b.build(), c);
  ASSERT_EQ(sigs.size(), 2u);
  EXPECT_EQ(sigs[0].send_count, 4u);
  EXPECT_EQ(sigs[1].reduce, ReduceOp::sum);
}

}  // namespace
}  // namespace amaxcheck::gpu
