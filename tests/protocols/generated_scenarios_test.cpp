// Generated scenarios are well formed, deterministic, and shaped as the protocol says.
#include <gtest/gtest.h>

#include <set>

#include "io/scenario_json.h"
#include "io/scenario_validate.h"
#include "run_protocol.h"

namespace amaxcheck {
namespace {

using testing::knobs_of;

std::vector<ProtocolKnobs> variety() {
  std::vector<ProtocolKnobs> all;
  for (ProtocolName p : {ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling}) {
    all.push_back(knobs_of(p, {}));
    all.push_back(knobs_of(p, {{"dp", "2"}, {"tp", "2"}, {"pp", "2"}, {"cp", "2"}, {"group", "world"}}));
    all.push_back(knobs_of(p, {{"dp", "4"}, {"grad-op", "reduce-scatter"}, {"buckets", "5"}, {"modules", "3"},
                               {"grad-overlap", "off"}, {"recompute", "on"}, {"eval", "2:1"}}));
    all.push_back(knobs_of(p, {{"dp", "3"}, {"microbatches", "3"}, {"iters", "3"}, {"history", "4"},
                               {"skip", "2:1"}, {"amax-order", "rank-dependent"}, {"kernels", "serialized"}}));
    all.push_back(knobs_of(p, {{"dp", "2"}, {"tp", "2"}, {"group", "0,3/1,2"}, {"order", "dp-tp-cp-pp"}}));
  }
  return all;
}

TEST(GeneratedScenarios, pass_structural_validation) {
  for (const ProtocolKnobs& knobs : variety()) {
    const Scenario s = build_protocol(knobs);
    EXPECT_NO_THROW(validate_scenario(s, s.source)) << s.source;
  }
}

TEST(GeneratedScenarios, are_byte_identical_when_built_twice) {
  for (const ProtocolKnobs& knobs : variety()) {
    EXPECT_EQ(scenario_to_text(build_protocol(knobs)), scenario_to_text(build_protocol(knobs)));
  }
}

TEST(GeneratedScenarios, every_rank_ends_its_main_thread_with_a_device_synchronize) {
  for (const ProtocolKnobs& knobs : variety()) {
    const Scenario s = build_protocol(knobs);
    for (const Rank& rank : s.ranks) {
      ASSERT_EQ(rank.threads[0].name, "main");
      EXPECT_EQ(rank.threads[0].program.back().kind, OpKind::device_synchronize) << s.source;
    }
  }
}

TEST(GeneratedScenarios, checks_cover_history_scale_and_scale_inv_of_every_module_on_every_rank) {
  for (const ProtocolKnobs& knobs : variety()) {
    const Scenario s = build_protocol(knobs);
    std::set<std::pair<RankId, std::string>> covered;
    for (const ReplicaCheck& check : s.checks) {
      for (const auto& replica : check.replicas) {
        covered.insert({replica.rank, s.ranks[replica.rank].buffers[replica.range.buffer].name});
      }
    }
    for (RankId r = 0; r < s.ranks.size(); ++r) {
      for (std::uint32_t m = 0; m < knobs.modules; ++m) {
        for (const char* dir : {"fwd", "bwd"}) {
          for (const char* what : {"amax_history", "scale", "scale_inv"}) {
            const std::string name = "m" + std::to_string(m) + "." + dir + "." + what;
            EXPECT_TRUE(covered.count({r, name})) << s.source << ": rank " << r << " " << name;
          }
        }
      }
    }
  }
}

TEST(GeneratedScenarios, amax_reductions_use_the_shared_dp_comm_only_when_asked) {
  const auto count_comm_use = [](const Scenario& s, const std::string& op_name) {
    std::set<std::string> comms;
    for (const Thread& t : s.ranks[0].threads) {
      for (const Op& op : t.program) {
        if (op.name == op_name) comms.insert(s.comms[op.comm].name);
      }
    }
    return comms;
  };
  const Scenario shared = build_protocol(knobs_of(ProtocolName::te_async, {{"comm", "shared"}}));
  EXPECT_EQ(count_comm_use(shared, "amax_reduce_fwd"), (std::set<std::string>{"dp"}));
  EXPECT_EQ(count_comm_use(shared, "grad_bucket_1"), (std::set<std::string>{"dp"}));
  const Scenario separate = build_protocol(knobs_of(ProtocolName::te_async, {{"comm", "separate"}}));
  EXPECT_EQ(count_comm_use(separate, "amax_reduce_bwd"), (std::set<std::string>{"amax"}));
  EXPECT_EQ(count_comm_use(separate, "grad_bucket_0"), (std::set<std::string>{"dp"}));
}

TEST(GeneratedScenarios, rank_dependent_order_puts_odd_ranks_amax_reduction_after_the_last_bucket) {
  const Scenario s = build_protocol(
      knobs_of(ProtocolName::te_sync, {{"amax-order", "rank-dependent"}, {"microbatches", "1"}, {"iters", "1"}}));
  for (RankId r : {0u, 1u}) {
    const auto& program = s.ranks[r].threads[1].program;  // autograd
    const auto index_of = [&](const char* name) {
      for (std::size_t i = 0; i < program.size(); ++i) {
        if (program[i].name == name) return i;
      }
      ADD_FAILURE() << name << " missing";
      return std::size_t{0};
    };
    EXPECT_EQ(index_of("amax_reduce_bwd") < index_of("grad_bucket_1"), r == 0) << "rank " << r;
  }
}

TEST(GeneratedScenarios, every_op_says_where_it_came_from) {
  const Scenario s = build_protocol(knobs_of(ProtocolName::te_async, {{"recompute", "on"}}));
  for (const Rank& rank : s.ranks) {
    for (const Thread& t : rank.threads) {
      for (const Op& op : t.program) {
        EXPECT_FALSE(op.name.empty());
        EXPECT_FALSE(op.origin.empty()) << op.name;
      }
    }
  }
}

TEST(GeneratedScenarios, a_scale_up_to_64_ranks_stays_quick_to_build) {
  const Scenario s = build_protocol(knobs_of(ProtocolName::te_async, {{"dp", "8"}, {"tp", "8"}, {"modules", "4"}}));
  EXPECT_EQ(s.ranks.size(), 64u);
  EXPECT_EQ(s.comms.size(), 8u /* dp groups */ + 1u /* one tp-dp amax group */);
}

}  // namespace
}  // namespace amaxcheck
