// Form 2's per-rank templates, zero-size buffers and `expected: "reference"`, read from the
// shipped examples and from spoilt copies of them: what they expand to, what the writer writes
// back, and every mistake as a load error naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>
#include <tuple>

#include "engine/engine.h"
#include "detectors/detector.h"
#include "io/json_text.h"
#include "io/scenario_json.h"
#include "shipped_files.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

using nlohmann::json;

json& program(json& doc) { return doc["ranks"][0]["threads"][0]["program"]; }

std::string load_error(const json& doc) {
  try {
    scenario_from_json(doc, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(loaded)";
}

std::set<HazardKind> hazards_of(const Scenario& s) {
  Engine engine(s);
  auto detectors = make_detectors(s);
  for (auto& d : detectors) engine.add_observer(d.get());
  run_first_enabled(engine);
  std::set<HazardKind> kinds;
  for (auto& d : detectors) {
    for (const Hazard& h : d->hazards()) kinds.insert(h.kind);
  }
  return kinds;
}

TEST(ScenarioTemplate, one_entry_expands_into_a_rank_per_listed_index) {
  const Scenario s = scenario_from_json(testing::shipped_json("custom-template-amax.json"), "t.json");
  ASSERT_EQ(s.ranks.size(), 4u);
  EXPECT_EQ(s.ranks[3].name, "rank3");
  EXPECT_EQ(s.ranks[2].threads[0].program[0].values, (std::vector<float>{1, 2}));   // even: 1, then {rank}
  EXPECT_EQ(s.ranks[3].threads[0].program[0].values, (std::vector<float>{-2, 3}));  // odd: -2
  ASSERT_EQ(s.checks[0].replicas.size(), 4u);
  EXPECT_EQ(s.checks[0].replicas[3].rank, 3u);
}

TEST(ScenarioTemplate, rank_expressions_parities_and_only_expand_on_each_rank_as_written) {
  // A pairwise exchange written once: {rank^1} is the partner (0-1, 2-3), {rank^3} the rank
  // across (0-3, 1-2); even and odd ranks take their own value; "only": "odd" ops exist on
  // odd ranks alone.
  const json doc = json::parse(R"({
    "name": "pairs",
    "ranks": [{"for": [0, 1, 2, 3], "name": "rank{rank}", "streams": ["s"], "buffers": [{"name": "x", "size": 4}],
      "threads": [{"name": "main", "program": [
        {"kind": "fill", "name": "values", "stream": "s", "writes": [{"buffer": "x"}],
         "values": [{"even": 10, "odd": 20}, "{rank^1}", "{rank^3}", "{rank - 1}"], "only": [1, 2, 3]},
        {"only": "odd", "kind": "fill", "name": "odd_only", "stream": "s", "writes": [{"buffer": "x"}], "values": [0, 0, 0, 0]}
      ]}]}]})");
  const Scenario s = scenario_from_json(doc, "pairs.json");
  ASSERT_EQ(s.ranks.size(), 4u);
  for (RankId r = 0; r < 4; ++r) {
    std::vector<std::string> names;
    for (const Op& op : s.ranks[r].threads[0].program) names.push_back(op.name);
    std::vector<std::string> expected;
    if (r != 0) expected.push_back("values");
    if (r % 2 == 1) expected.push_back("odd_only");
    EXPECT_EQ(names, expected) << "rank " << r;
    if (r == 0) continue;
    EXPECT_EQ(s.ranks[r].threads[0].program[0].values,
              (std::vector<float>{r % 2 == 0 ? 10.0f : 20.0f, static_cast<float>(r ^ 1), static_cast<float>(r ^ 3),
                                  static_cast<float>(r - 1)}))
        << "rank " << r;
  }
}

TEST(ScenarioTemplate, the_writer_writes_the_expansion_and_reading_it_back_gives_the_same_text) {
  const Scenario s = scenario_from_json(testing::shipped_json("custom-template-amax.json"), "t.json");
  const std::string text = scenario_to_text(s);
  EXPECT_EQ(text.find("\"for\""), std::string::npos);
  EXPECT_NE(text.find("\"expected\": \"reference\""), std::string::npos);
  const Scenario again = scenario_from_json(parse_json_text(text, "again.json"), "again.json");
  EXPECT_EQ(scenario_to_text(again), text);
  EXPECT_EQ(again.checks[0].expected, s.checks[0].expected);
}

TEST(ScenarioTemplate, a_rank_outside_the_scenario_is_a_load_error) {
  json doc = testing::shipped_json("custom-template-amax.json");
  doc["ranks"][0]["for"] = {0, 1, 2, 5};
  EXPECT_NE(load_error(doc).find("t.json: ranks[0].for[3]: rank 5 is outside the scenario, which has 4 ranks (0..3)"),
            std::string::npos)
      << load_error(doc);
}

TEST(ScenarioTemplate, an_expression_giving_a_rank_outside_the_scenario_is_a_load_error) {
  json doc = testing::shipped_json("custom-pipeline-template.json");
  program(doc)[6].erase("only");  // stage 3 now sends to stage {rank+1} = 4
  const std::string error = load_error(doc);
  EXPECT_NE(error.find("ranks[0].threads[0].program[6].peer: {rank+1} is rank 4, outside the scenario"), std::string::npos)
      << error;
  EXPECT_NE(error.find("for rank 3"), std::string::npos) << error;
}

TEST(ScenarioTemplate, other_template_mistakes_are_load_errors_naming_the_field) {
  const std::vector<std::tuple<std::function<void(json&)>, std::string>> cases = {
      {[](json& d) { d["ranks"][0]["for"] = {0, 1, 1, 2}; }, "ranks[0].for[2]: rank 1 is listed twice"},
      {[](json& d) { d["ranks"].push_back(json{{"threads", json::array()}}); }, "ranks[1]: expected a \"for\" list"},
      {[](json& d) { program(d)[0]["values"][1] = "{rnk}"; }, "program[0].values[1]: {rnk}: expected {rank}"},
      {[](json& d) { program(d)[0]["only"] = {7}; }, "program[0].only[0]: rank 7 is outside the scenario"},
      {[](json& d) { d["checks"][0]["replicas"][0]["for"] = {0, 4}; }, "checks[0].replicas[0].for[1]: rank 4 is outside"},
      {[](json& d) { d["checks"][0]["replicas"][0]["rank"] = 0; }, "expected no \"rank\""},
      {[](json& d) { d["checks"][0]["expected"] = "sequential"; }, "checks[0].expected: expected an array of values or \"reference\""},
  };
  for (const auto& [spoil, message] : cases) {
    json doc = testing::shipped_json("custom-template-amax.json");
    spoil(doc);
    EXPECT_NE(load_error(doc).find(message), std::string::npos) << load_error(doc);
  }
}

TEST(ScenarioReference, takes_the_sequential_runs_answer) {
  const Scenario s = scenario_from_json(testing::shipped_json("custom-template-amax.json"), "t.json");
  ASSERT_TRUE(s.checks[0].expected_reference);
  EXPECT_EQ(s.checks[0].expected, std::vector<float>{448.0f / 3.0f});      // amax 3 over the four ranks
  EXPECT_EQ(s.checks[1].expected, (std::vector<float>{0.0f, 3.0f}));      // rolled history
  EXPECT_TRUE(hazards_of(s).empty());
}

// The scale update moved to a stream of its own, with nothing making it wait for the reduction:
// the sequential run still blocks the thread on the all-reduce, so the reference is the
// design's meaning (the reduced amax, as above), and the asynchronous run races against it.
TEST(ScenarioReference, blocks_each_thread_on_its_op_so_an_unordered_update_still_reads_the_reduced_amax) {
  json doc = testing::shipped_json("custom-template-amax.json");
  doc["ranks"][0]["streams"].push_back("update");
  program(doc)[3]["stream"] = "update";
  const Scenario s = scenario_from_json(doc, "t.json");
  EXPECT_EQ(s.checks[0].expected, std::vector<float>{448.0f / 3.0f});
  EXPECT_EQ(s.checks[1].expected, (std::vector<float>{0.0f, 3.0f}));
  EXPECT_TRUE(hazards_of(s).contains(HazardKind::data_race));
}

// Replicas that end with the same bits are one answer, NaN included; +0 against -0 is not.
// (The reference once compared them as floats: every NaN was "different values", and a signed
// zero agreed with its opposite, unlike the value detector.)
TEST(ScenarioReference, compares_the_replicas_by_their_bits) {
  for (const char* values : {"same nan", "signed zeros"}) {
    json doc = testing::shipped_json("custom-template-amax.json");
    doc["ranks"][0]["buffers"].push_back(json{{"name", "flag"}, {"size", 1}});
    const json value = values == std::string("same nan") ? json("nan") : json{{"even", 0.0}, {"odd", -0.0}};
    program(doc).push_back(json{{"kind", "fill"}, {"stream", "compute"}, {"writes", json::array({json{{"buffer", "flag"}}})},
                                {"values", json::array({value})}});
    doc["checks"].push_back(json{{"tensor", "flag"},
                                 {"replicas", json::array({json{{"for", {0, 1, 2, 3}}, {"buffer", "flag"}}})},
                                 {"expected", "reference"}});
    if (values == std::string("signed zeros")) {
      EXPECT_NE(load_error(doc).find("has no single answer"), std::string::npos) << load_error(doc);
      continue;
    }
    const Scenario s = scenario_from_json(doc, "t.json");
    ASSERT_EQ(s.checks[2].expected.size(), 1u);
    EXPECT_TRUE(std::isnan(s.checks[2].expected[0]));
    EXPECT_TRUE(hazards_of(s).empty());
  }
}

TEST(ScenarioReference, is_refused_without_the_delayed_scaling_ops) {
  json doc = testing::shipped_json("custom-pipeline-template.json");
  doc["checks"][0]["expected"] = "reference";
  EXPECT_NE(load_error(doc).find("checks[0].expected: \"reference\" needs the standard delayed-scaling ops"),
            std::string::npos)
      << load_error(doc);
}

TEST(ScenarioReference, is_refused_when_the_replicas_differ_even_run_sequentially) {
  json doc = testing::shipped_json("custom-template-amax.json");
  program(doc).erase(2);  // no amax all-reduce: each rank scales by its own amax
  EXPECT_NE(load_error(doc).find("has no single answer"), std::string::npos) << load_error(doc);
}

TEST(ScenarioReference, is_refused_when_the_sequential_run_does_not_finish) {
  json doc = testing::shipped_json("custom-template-amax.json");
  program(doc)[2]["only"] = "even";  // odd ranks never reduce: the even ones wait for them
  EXPECT_NE(load_error(doc).find("does not finish"), std::string::npos) << load_error(doc);
}

TEST(ZeroSize, empty_buffers_and_ranges_load_and_write_back_the_same) {
  const Scenario s = scenario_from_json(testing::shipped_json("custom-empty-input.json"), "t.json");
  EXPECT_EQ(s.ranks[1].buffers[0].size, 0u);
  EXPECT_EQ(s.ranks[1].threads[0].program[2].reads[0].count, 0u);
  const std::string text = scenario_to_text(s);
  EXPECT_EQ(scenario_to_text(scenario_from_json(parse_json_text(text, "again.json"), "again.json")), text);
}

TEST(ZeroSize, a_discarded_empty_reduction_hangs_its_peer_and_joining_with_amax_zero_is_clean) {
  json doc = testing::shipped_json("custom-empty-input.json");
  EXPECT_TRUE(hazards_of(scenario_from_json(doc, "t.json")).contains(HazardKind::deadlock));
  for (const char* side : {"reads", "writes"}) program(doc)[2][side][0]["count"] = 1;
  EXPECT_TRUE(hazards_of(scenario_from_json(doc, "t.json")).empty());
}

TEST(ZeroSize, a_range_past_an_empty_buffer_is_still_a_load_error) {
  json doc = testing::shipped_json("custom-empty-input.json");
  program(doc)[1]["reads"][0]["count"] = 1;
  EXPECT_NE(load_error(doc).find("ranks[0] (for rank 1).threads[0].program[1].reads[0]: range [0, 1) runs past the end of "
                                 "buffer \"x\" (size 0)"),
            std::string::npos)
      << load_error(doc);
}

TEST(PointToPoint, a_recv_with_no_matching_send_loads_and_is_a_deadlock_when_run) {
  json doc = testing::shipped_json("custom-pipeline-template.json");
  program(doc)[6]["only"] = {0, 1};  // stage 2 no longer sends: stage 3's recv has no match
  Scenario s;
  ASSERT_NO_THROW(s = scenario_from_json(doc, "t.json"));
  EXPECT_TRUE(hazards_of(s).contains(HazardKind::deadlock));
}

}  // namespace
}  // namespace amaxcheck
