// `amaxcheck check` with a wrong amax group: exit 1, and a report that names the tensor and
// the TP peers (the two commands of issue 14, clean before the checks came from the layout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/commands.h"
#include "run_cli.h"

namespace amaxcheck::cli {
namespace {

using ::testing::HasSubstr;

/// `amaxcheck check ARGS... --runs 2`, its trace in the temporary folder.
Ran check(std::vector<std::string> args) {
  args.insert(args.begin(), "check");
  args.insert(args.end(), {"--runs", "2", "--trace-out", temp_path("wrong_group.jsonl")});
  return amaxcheck(args);
}

TEST(WrongGroupCheck, the_dp_group_under_tp_is_a_hazard_naming_the_tensor_and_the_tp_peers) {
  const Ran o = check({"te-sync", "--tp", "2", "--dp", "2", "--modules", "1", "--iters", "1", "--group", "dp"});
  EXPECT_EQ(o.code, exit_hazard) << o.out;
  // The first divergence in time is printed in full: which of the six tensors it is depends on
  // the schedule; the ranks do not (the TP peers 0 and 1, their coordinates shown).
  EXPECT_THAT(o.out, HasSubstr("replica_divergence: stage 0 / module 0 / "));
  EXPECT_THAT(o.out, HasSubstr(" differs between rank 0 and rank 1 at element "));
  EXPECT_THAT(o.out, HasSubstr("rank0 (dp0 tp0 pp0 cp0): buffer m0."));
  EXPECT_THAT(o.out, HasSubstr("rank1 (dp0 tp1 pp0 cp0): buffer m0."));
  EXPECT_THAT(o.out, HasSubstr("rank 1's value is held by ranks 1, 3"));
  EXPECT_THAT(o.out, HasSubstr("hazards by kind and tensor"));
  EXPECT_THAT(o.out, HasSubstr("replica_divergence  stage 0 / module 0 / backward / scale_inv: "));
}

TEST(WrongGroupCheck, a_group_per_rank_under_tp_is_a_hazard_naming_the_tensor_and_the_tp_peers) {
  const Ran o = check({"te-sync", "--tp", "2", "--dp", "1", "--group", "0/1"});
  EXPECT_EQ(o.code, exit_hazard) << o.out;
  EXPECT_THAT(o.out, HasSubstr("differs between rank 0 and rank 1"));
  EXPECT_THAT(o.out, HasSubstr("rank1 (dp0 tp1 pp0 cp0)"));
  EXPECT_THAT(o.out, HasSubstr("value_mismatch"));
}

TEST(WrongGroupCheck, the_correct_group_stays_clean) {
  const Ran o = check({"te-sync", "--tp", "2", "--dp", "2", "--modules", "1", "--iters", "1"});
  EXPECT_EQ(o.code, exit_clean) << o.out;
}

}  // namespace
}  // namespace amaxcheck::cli
