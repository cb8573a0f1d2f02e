// Aligning and matching a job's dumps (fr/align.h, agreement.h, inversion.h, window.h,
// match_json.h): each rule on a few small dumps, with the findings' exact words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "fr/agreement.h"
#include "fr/inversion.h"
#include "fr/match_json.h"
#include "fr/readers.h"
#include "fr/show.h"
#include "fr/window.h"

namespace amaxcheck::fr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// One entry of a dump; `record_id` defaults to its position.
struct E {
  std::string group = "0";
  std::int64_t seq = 1;
  std::string name = "nccl:all_reduce";
  std::int64_t size = 8;
  std::string dtype = "Float";
  std::string state = "completed";
  std::optional<std::int64_t> out_size = std::nullopt;  // when the output differs (a gather)
};

nlohmann::json entry(const E& e, std::int64_t record_id) {
  return {{"record_id", record_id},
          {"process_group", {e.group, "desc " + e.group}},
          {"collective_seq_id", e.seq},
          {"profiling_name", e.name},
          {"input_sizes", {{e.size}}},
          {"output_sizes", {{e.out_size.value_or(e.size)}}},
          {"input_dtypes", {e.dtype}},
          {"output_dtypes", {e.dtype}},
          {"state", e.state},
          {"time_created_ns", 1000 + record_id},
          {"is_p2p", false}};
}

/// A rank's dump: its entries in order, record_ids from `first_id` (above 0: a wrapped buffer),
/// and its pg_config (group -> ranks), when given.
Dump dump(std::int64_t rank, const std::vector<E>& entries, std::int64_t first_id = 0,
          const std::map<std::string, std::vector<std::int64_t>>& pg_config = {}) {
  nlohmann::json doc = {{"version", "2.4"}, {"rank", rank}, {"entries", nlohmann::json::array()}};
  for (std::size_t i = 0; i < entries.size(); ++i) doc["entries"].push_back(entry(entries[i], first_id + static_cast<std::int64_t>(i)));
  if (!pg_config.empty()) {
    doc["pg_config"] = nlohmann::json::object();
    for (const auto& [g, ranks] : pg_config) doc["pg_config"][g] = {{"name", g}, {"desc", ""}, {"ranks", python_list(ranks)}};
  }
  return validate_dump(*read_json(doc.dump()), "rank" + std::to_string(rank), rank);
}

/// Entries for seqs `from`..`to` of one group.
std::vector<E> seqs(std::int64_t from, std::int64_t to, const std::string& group = "0") {
  std::vector<E> out;
  for (std::int64_t s = from; s <= to; ++s) out.push_back({.group = group, .seq = s});
  return out;
}

struct Matched {
  Job job;
  Alignment alignment;
  AgreementReport report;
};

Matched match(std::vector<Dump> dumps, Kernels kernels = Kernels::auto_detect) {
  Matched m{Job(std::move(dumps)), {}, {}};
  m.alignment = align(m.job);
  m.report = check(m.job, m.alignment, kernels);
  return m;
}

std::vector<std::string> texts(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const Finding& f : findings) out.push_back(f.text);
  return out;
}

TEST(Match, ranks_that_agree_on_every_collective_are_consistent) {
  const Matched m = match({dump(0, seqs(1, 5)), dump(1, seqs(1, 5))});
  ASSERT_EQ(m.report.groups.size(), 1u);
  const GroupReport& g = m.report.groups[0];
  EXPECT_EQ(g.matched, 5u);
  EXPECT_EQ(g.divergent, 0u);
  EXPECT_FALSE(g.first);
  EXPECT_TRUE(g.undecidable.empty());
  EXPECT_TRUE(m.report.inversions.empty());
  EXPECT_TRUE(m.report.missing_ranks.empty());
}

TEST(Match, a_size_mismatch_names_the_odd_rank_and_each_blocks_sizes) {
  std::vector<E> odd = seqs(1, 3);
  odd[1].size = 16;
  const Matched m = match({dump(0, seqs(1, 3)), dump(1, odd), dump(2, seqs(1, 3))});
  const GroupReport& g = m.report.groups[0];
  ASSERT_TRUE(g.first);
  EXPECT_EQ(g.first->seq, 2);
  EXPECT_THAT(g.first->ranks, ElementsAre(1));
  EXPECT_THAT(texts(g.first->findings),
              ElementsAre("sizes differ: ranks 0, 2: in [[8]] out [[8]]; rank 1: in [[16]] out [[16]]"));
  EXPECT_EQ(g.first->time_ns, 1001);
  EXPECT_EQ(g.matched, 2u);
}

TEST(Match, an_even_split_blames_every_rank) {
  std::vector<E> other = seqs(1, 1);
  other[0].dtype = "BFloat16";
  const Matched m = match({dump(0, seqs(1, 1)), dump(1, other)});
  const GroupReport& g = m.report.groups[0];
  ASSERT_TRUE(g.first);
  EXPECT_THAT(g.first->ranks, ElementsAre(0, 1));
  EXPECT_THAT(texts(g.first->findings),
              ElementsAre("dtypes differ: rank 0: in Float out Float; rank 1: in BFloat16 out BFloat16"));
}

TEST(Match, a_rank_whose_records_end_early_never_joined_the_rest) {
  const Matched m = match({dump(0, seqs(1, 5)), dump(1, seqs(1, 3)), dump(2, seqs(1, 3))});
  const GroupReport& g = m.report.groups[0];
  ASSERT_TRUE(g.first);
  EXPECT_EQ(g.first->seq, 4);
  EXPECT_THAT(texts(g.first->findings), ElementsAre("ranks 1, 2 never issued it (its last is #3)"));
  EXPECT_EQ(g.divergent, 2u);
  ASSERT_EQ(g.divergent_seqs.size(), 2u);
  EXPECT_EQ(g.divergent_seqs[1].seq, 5);
  EXPECT_THAT(g.divergent_seqs[1].kinds, ElementsAre(FindingKind::not_joined));
}

TEST(Align, buffers_wrapped_at_different_record_ids_are_compared_where_they_overlap) {
  // rank 0 ran its counters ahead (record_ids from 500) and kept seqs 10..20; rank 1 kept 5..20
  const Matched m = match({dump(0, seqs(10, 20), 500), dump(1, seqs(5, 20), 40)});
  const GroupReport& g = m.report.groups[0];
  EXPECT_EQ(g.lo, 10);
  EXPECT_EQ(g.hi, 20);
  EXPECT_EQ(g.matched, 11u);
  EXPECT_FALSE(g.first);
  EXPECT_EQ(m.alignment.wrapped, (std::vector<bool>{true, true}));
}

TEST(Match, a_wrapped_buffer_without_the_group_is_undecidable_and_an_unwrapped_one_never_joined) {
  const std::map<std::string, std::vector<std::int64_t>> config = {{"0", {0, 1}}, {"1", {0, 1}}};
  std::vector<E> both = seqs(1, 2);
  both.push_back({.group = "1", .seq = 1});
  {
    const Matched m = match({dump(0, both, 0, config), dump(1, seqs(1, 2), 7, config)});
    const GroupReport& g1 = m.report.groups[1];
    EXPECT_EQ(g1.name, "1");
    ASSERT_EQ(g1.undecidable.size(), 1u);
    EXPECT_EQ(g1.undecidable[0], (std::pair<std::int64_t, std::string>{1, "its wrapped ring buffer holds no record of this group"}));
    EXPECT_FALSE(g1.first);
  }
  const Matched m = match({dump(0, both, 0, config), dump(1, seqs(1, 2), 0, config)});
  const GroupReport& g1 = m.report.groups[1];
  ASSERT_TRUE(g1.first);
  EXPECT_THAT(texts(g1.first->findings),
              ElementsAre("rank 1 never issued it (no record of this group in an unwrapped buffer)"));
}

TEST(Match, a_member_without_a_dump_is_missing_and_undecidable) {
  const std::map<std::string, std::vector<std::int64_t>> config = {{"0", {0, 1, 2}}};
  const Matched m = match({dump(0, seqs(1, 2), 0, config), dump(1, seqs(1, 2), 0, config)});
  EXPECT_THAT(m.report.missing_ranks, ElementsAre(2));
  EXPECT_THAT(m.report.notes, ElementsAre("no dump for rank(s) 2: what they did is unknown, so the job cannot be "
                                          "called consistent"));
  EXPECT_EQ(m.report.groups[0].undecidable[0], (std::pair<std::int64_t, std::string>{2, "no dump"}));
  EXPECT_THAT(m.report.groups[0].dumped, ElementsAre(0, 1));
}

TEST(Match, dumps_that_disagree_on_the_members_are_a_finding_and_the_majority_wins) {
  const Matched m = match({dump(0, seqs(1, 1), 0, {{"0", {0, 1}}}), dump(1, seqs(1, 1), 0, {{"0", {0, 1}}}),
                           dump(2, seqs(1, 1), 0, {{"0", {0, 1, 2}}})});
  const GroupReport& g = m.report.groups[0];
  EXPECT_THAT(g.members, ElementsAre(0, 1));
  EXPECT_THAT(texts(g.membership),
              ElementsAre("the dumps disagree on the members: rank(s) 0, 1 say [0, 1]; rank(s) 2 say [0, 1, 2]"));
}

TEST(Match, an_operation_mismatch_names_each_rank_s_op_without_its_backend) {
  // Rank 1 broadcasts where ranks 0 and 2 all-reduce, all of one size: a type mismatch, shown
  // as the collectives (the profiling name's backend, "nccl:", is the group's, not the op's).
  std::vector<E> odd = seqs(1, 3);
  odd[1].name = "nccl:broadcast";
  const Matched m = match({dump(0, seqs(1, 3)), dump(1, odd), dump(2, seqs(1, 3))});
  const GroupReport& g = m.report.groups[0];
  ASSERT_TRUE(g.first);
  EXPECT_EQ(g.first->seq, 2);
  EXPECT_THAT(g.first->ranks, ElementsAre(1));
  EXPECT_THAT(texts(g.first->findings), ElementsAre("operations differ: ranks 0, 2: all_reduce; rank 1: broadcast"));
}

TEST(Match, gloo_states_are_not_compared) {
  std::vector<E> a = {{.name = "gloo:all_reduce", .state = "scheduled"}};
  std::vector<E> b = {{.name = "gloo:all_reduce", .state = "completed"}};
  EXPECT_FALSE(match({dump(0, a), dump(1, b)}).report.groups[0].first);
  a[0].name = b[0].name = "nccl:all_reduce";
  const Matched m = match({dump(0, a), dump(1, b)});
  ASSERT_TRUE(m.report.groups[0].first);
  EXPECT_THAT(texts(m.report.groups[0].first->findings),
              ElementsAre("states differ: rank 0: scheduled; rank 1: completed"));
}

/// Two ranks issuing group 0 #1 and group 1 #1 in opposite orders, on `backend`.
std::vector<Dump> inverted(const std::string& backend) {
  const E a{.group = "0", .seq = 1, .name = backend + ":all_reduce"};
  const E b{.group = "1", .seq = 1, .name = backend + ":all_reduce"};
  return {dump(0, {a, b}), dump(1, {b, a})};
}

TEST(Inversion, opposite_orders_of_two_shared_groups_are_found_with_both_ranks_records) {
  const Matched m = match(inverted("nccl"));
  ASSERT_EQ(m.report.inversions.size(), 1u);
  const Divergence& d = m.report.inversions[0];
  EXPECT_EQ(d.group, "0");
  EXPECT_EQ(d.seq, 1);
  EXPECT_EQ(d.other, (std::pair<std::string, std::int64_t>{"1", 1}));
  EXPECT_THAT(texts(d.findings),
              ElementsAre("rank 0 issues group 0 #1 before group 1 #1; rank 1 issues group 1 #1 first"));
  ASSERT_EQ(d.records.size(), 2u);
  EXPECT_EQ(d.records[0].first, 0);
  EXPECT_EQ(d.records[0].second[0].record, 0u);  // rank 0's group 0 #1, then its group 1 #1
  EXPECT_EQ(d.records[0].second[1].record, 1u);
  EXPECT_TRUE(d.deadlocks);
  EXPECT_FALSE(m.report.groups[0].first);  // each group on its own agrees
}

TEST(Inversion, deadlocks_under_nccls_serialized_kernels_only_unless_the_user_says) {
  EXPECT_FALSE(match(inverted("gloo")).report.inversions.at(0).deadlocks);
  EXPECT_TRUE(match(inverted("gloo"), Kernels::serialized).report.inversions.at(0).deadlocks);
  EXPECT_FALSE(match(inverted("nccl"), Kernels::concurrent).report.inversions.at(0).deadlocks);
}

TEST(Match, a_huge_seq_is_one_seq_not_a_range) {
  std::vector<E> a = seqs(1, 2);
  a.push_back({.seq = 1'000'000'000'000});
  const Matched m = match({dump(0, a), dump(1, seqs(1, 2))});
  const GroupReport& g = m.report.groups[0];
  EXPECT_EQ(g.matched, 2u);
  EXPECT_EQ(g.divergent, 1u);
  EXPECT_EQ(g.first->seq, 1'000'000'000'000);
}

TEST(Window, keeps_the_last_k_collectives_up_to_the_first_divergence_on_every_rank) {
  const Matched m = match({dump(0, seqs(1, 10)), dump(1, seqs(1, 6))});
  const ScenarioWindow w = scenario_window(m.job, m.alignment, m.report, 3);
  EXPECT_THAT(w.seqs, ElementsAre(std::pair<std::int64_t, std::int64_t>{5, 7}));
  EXPECT_THAT(w.kept[0], ElementsAre(4u, 5u, 6u));
  EXPECT_THAT(w.kept[1], ElementsAre(4u, 5u));
}

TEST(MatchJson, holds_the_findings_and_only_the_records_they_and_the_window_need) {
  const Matched m = match({dump(0, seqs(1, 10)), dump(1, seqs(1, 6))});
  const ScenarioWindow w = scenario_window(m.job, m.alignment, m.report, 2);
  const auto doc = nlohmann::json::parse(match_json(m.job, m.alignment, m.report, w));
  EXPECT_EQ(doc["groups"][0]["first"]["seq"], 7);
  EXPECT_EQ(doc["records"].size(), 3u);  // rank 0's #6 and #7, rank 1's #6 (the first divergence's are among them)
  EXPECT_EQ(doc["dumps"][1]["records"], 6);
  EXPECT_EQ(doc["records"][0].size(), std::size(record_row_fields));
}

TEST(MatchJson, counts_a_groups_agreeing_and_diverging_collectives_apart) {
  const Matched m = match({dump(0, seqs(1, 10)), dump(1, seqs(1, 6))});
  const auto doc = nlohmann::json::parse(match_json(m.job, m.alignment, m.report, scenario_window(m.job, m.alignment, m.report, 2)));
  EXPECT_EQ(doc["groups"][0]["matched"], 6);
  EXPECT_EQ(doc["groups"][0]["divergent"], 4);
}

// Each row names its record as the file does (record_id, past the buffer's wrap) and keeps
// an all_gather's input and output apart: the scenario sizes its buffers from them.
TEST(MatchJson, a_record_row_holds_its_own_ids_and_sizes) {
  std::vector<E> gathers = seqs(1, 2);
  for (E& e : gathers) {
    e.name = "nccl:all_gather";
    e.out_size = 16;
  }
  const Matched m = match({dump(0, gathers, 500), dump(1, gathers)});
  const auto doc = nlohmann::json::parse(match_json(m.job, m.alignment, m.report, scenario_window(m.job, m.alignment, m.report, 1)));
  const auto column = [](std::string_view name) {
    return static_cast<std::size_t>(std::find(std::begin(record_row_fields), std::end(record_row_fields), name) -
                                    std::begin(record_row_fields));
  };
  ASSERT_EQ(doc["kept"][0].size(), 1u);  // rank 0's #2
  const auto& row = doc["records"][doc["kept"][0][0].get<std::size_t>()];
  EXPECT_EQ(row[column("rank")], 0);
  EXPECT_EQ(row[column("index")], 1);
  EXPECT_EQ(row[column("record_id")], 501);
  EXPECT_EQ(row[column("input_sizes")], nlohmann::json::parse("[[8]]"));
  EXPECT_EQ(row[column("output_sizes")], nlohmann::json::parse("[[16]]"));
}

// load_dumps sorts by rank; the report still names each rank's own file (its position among
// those given: here rank_1 then rank_0).
TEST(MatchJson, each_dump_is_reported_with_the_position_of_its_file) {
  std::vector<Dump> dumps = {dump(0, seqs(1, 2)), dump(1, seqs(1, 2))};
  dumps[0].input = 1;
  dumps[1].input = 0;
  const Matched m = match(std::move(dumps));
  const auto doc = nlohmann::json::parse(match_json(m.job, m.alignment, m.report, scenario_window(m.job, m.alignment, m.report, 2)));
  EXPECT_EQ(doc["dumps"][0]["rank"], 0);
  EXPECT_EQ(doc["dumps"][0]["input"], 1);
  EXPECT_EQ(doc["dumps"][1]["input"], 0);
}

TEST(Show, ranks_fold_into_runs_and_long_text_is_cut_by_characters) {
  EXPECT_EQ(ranks_text({9, 0, 2, 3, 4, 5, 7, 8}), "0, 2-5, 7-9");
  EXPECT_EQ(ranks_text({8, 0, 7}), "0, 7, 8");
  EXPECT_EQ(ranks_text({}), "");
  std::string wide;
  for (int i = 0; i < 250; ++i) wide += "\xc3\xa9";
  EXPECT_THAT(cut(wide), HasSubstr("... (250 chars)"));
  EXPECT_EQ(cut(wide), wide.substr(0, 2 * max_text) + "... (250 chars)");  // 200 characters, not bytes
  EXPECT_EQ(cut(std::string(200, 'x')), std::string(200, 'x'));
}

}  // namespace
}  // namespace amaxcheck::fr
