// How hazards read: grouped by kind and tensor, every affected tensor with its count, the
// first in time first.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cli/hazard_report.h"

namespace amaxcheck::cli {
namespace {

using ::testing::HasSubstr;

Hazard make(HazardKind kind, std::string subject, std::vector<std::pair<RankId, std::size_t>> ranks_and_steps,
            std::string op = "scale_update_fwd") {
  Hazard h;
  h.kind = kind;
  h.subject = std::move(subject);
  h.summary = fmt::format("{} on {}", to_string(kind), h.subject);
  std::uint32_t index = 0;
  for (auto [rank, step] : ranks_and_steps) {
    h.participants.push_back(Participant{rank, "stream compute", OpRef{rank, 0, index++}, op, "iter 0", step});
  }
  return h;
}

/// The detectors' order (races, collectives, deadlock, values) is not the order in time.
std::vector<Hazard> mixed() {
  return {
      make(HazardKind::replica_divergence, "stage 0 / module 0 / forward / scale", {{0, 300}, {1, 310}}),
      make(HazardKind::value_mismatch, "stage 0 / module 0 / forward / scale", {{1, 310}}),
      make(HazardKind::value_mismatch, "stage 0 / module 0 / forward / scale", {{3, 320}}),
      make(HazardKind::value_mismatch, "stage 0 / module 0 / backward / scale", {{1, 305}}, "scale_update_bwd"),
      make(HazardKind::data_race, "amax_fwd.a1", {{0, 12}, {0, 20}}, "copy_back_fwd"),
  };
}

TEST(HazardReport, groups_by_kind_and_subject_the_first_in_time_first) {
  const std::vector<Hazard> hazards = mixed();
  const auto groups = group_hazards(hazards);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].kind, HazardKind::data_race);  // step 20
  EXPECT_EQ(groups[1].kind, HazardKind::value_mismatch);  // step 305
  EXPECT_EQ(groups[1].subject, "stage 0 / module 0 / backward / scale");
  EXPECT_EQ(groups[2].kind, HazardKind::replica_divergence);  // step 310, detected first
  EXPECT_EQ(groups[3].kind, HazardKind::value_mismatch);  // steps 310 and 320
  EXPECT_EQ(groups[3].subject, "stage 0 / module 0 / forward / scale");
  EXPECT_EQ(groups[3].members.size(), 2u);
  EXPECT_EQ(groups[3].ranks, (std::vector<RankId>{1, 3}));
}

TEST(HazardReport, kinds_lead_with_the_first_in_time) {
  EXPECT_EQ(hazard_kinds(mixed()), "data_race, value_mismatch, replica_divergence");
  EXPECT_EQ(hazard_kinds({}), "-");
}

TEST(HazardReport, prints_the_first_of_each_kind_in_full_and_every_tensor_with_its_count) {
  const std::string text = format_hazard_groups(mixed(), std::vector<std::string>(mixed().size(), "amaxcheck replay t.jsonl"));
  EXPECT_EQ(text.find("  data_race: data_race on amax_fwd.a1\n"), 0u) << text;
  EXPECT_THAT(text, HasSubstr("  value_mismatch: value_mismatch on stage 0 / module 0 / backward / scale\n"));
  EXPECT_THAT(text, HasSubstr("    replay: amaxcheck replay t.jsonl\n"));
  EXPECT_THAT(text, HasSubstr("  hazards by kind and tensor (5 in all, the first in time first; --json lists each):\n"));
  EXPECT_THAT(text, HasSubstr("    data_race           amax_fwd.a1: 1 on rank 0 (copy_back_fwd)\n"));
  EXPECT_THAT(text, HasSubstr("    value_mismatch      stage 0 / module 0 / forward / scale: 2 on ranks 1, 3 (scale_update_fwd)\n"));
  EXPECT_THAT(text, HasSubstr("    value_mismatch      stage 0 / module 0 / backward / scale: 1 on rank 1 (scale_update_bwd)\n"));
  EXPECT_THAT(text, HasSubstr("    replica_divergence  stage 0 / module 0 / forward / scale: 1 on ranks 0, 1 (scale_update_fwd)\n"));
  // Only the first value_mismatch is printed in full.
  EXPECT_EQ(text.find("  value_mismatch: value_mismatch on stage 0 / module 0 / forward / scale\n"), std::string::npos);
}

TEST(HazardReport, a_tally_counts_hazards_and_what_they_are_about_per_kind) {
  EXPECT_EQ(hazard_tally(mixed()), "data_race x1 on 1 buffer, value_mismatch x3 on 2 tensors, replica_divergence x1 on 1 tensor");
  Hazard deadlock;
  deadlock.kind = HazardKind::deadlock;
  EXPECT_EQ(hazard_tally({deadlock}), "deadlock x1");
  EXPECT_EQ(hazard_tally({}), "-");
}

TEST(HazardReport, a_single_hazard_needs_no_index) {
  const std::string text = format_hazard_groups({mixed()[4]}, {});
  EXPECT_THAT(text, ::testing::Not(HasSubstr("by kind and tensor")));
  EXPECT_THAT(text, HasSubstr("rank 0 stream compute: copy_back_fwd [iter 0] (thread 0 op 0, step 12)"));
}

TEST(HazardReport, json_groups_point_at_their_first_hazard) {
  const std::vector<Hazard> hazards = mixed();
  const auto groups = hazard_groups_json(hazards);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0]["kind"], "data_race");
  EXPECT_EQ(groups[0]["first"], 4);
  EXPECT_EQ(groups[3]["subject"], "stage 0 / module 0 / forward / scale");
  EXPECT_EQ(groups[3]["count"], 2);
  EXPECT_EQ(groups[3]["ranks"], nlohmann::ordered_json({1, 3}));
  EXPECT_EQ(groups[3]["first"], 1);
  EXPECT_EQ(groups[1]["first"], 3);
  EXPECT_EQ(hazard_json(hazards[0], "")["subject"], "stage 0 / module 0 / forward / scale");
}

}  // namespace
}  // namespace amaxcheck::cli
