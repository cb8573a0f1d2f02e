// The scenario files shipped in traces/scenarios load and give the verdicts the design notes
// predict: the four seed design points and the hand-written program.
#include <gtest/gtest.h>

#include <set>

#include "detectors/detector.h"
#include "engine/engine.h"
#include "io/scenario_json.h"
#include "shipped_files.h"

namespace amaxcheck {
namespace {

struct Verdict {
  std::set<HazardKind> kinds;
  bool done = false;
  std::string text;
  bool has(HazardKind k) const { return kinds.count(k) > 0; }
};

Verdict run(const Scenario& scenario) {
  Engine engine(scenario);
  auto detectors = make_detectors(scenario);
  for (auto& d : detectors) engine.add_observer(d.get());
  run_first_enabled(engine);
  Verdict v;
  v.done = engine.done();
  for (auto& d : detectors) {
    for (const Hazard& h : d->hazards()) {
      v.kinds.insert(h.kind);
      v.text += std::string(to_string(h.kind)) + ": " + h.summary + "\n";
    }
  }
  return v;
}

Verdict run_file(const std::string& name) { return run(load_scenario_file(testing::shipped_scenario(name))); }

TEST(ShippedScenarios, shared_comm_wait_before_copy_mismatches_collectives) {
  const Verdict v = run_file("te-async-shared-before-copy.json");
  EXPECT_TRUE(v.has(HazardKind::collective_mismatch)) << v.text;
  EXPECT_FALSE(v.has(HazardKind::data_race)) << v.text;
}

TEST(ShippedScenarios, shared_comm_wait_after_copy_races_then_mismatches) {
  const Verdict v = run_file("te-async-shared-after-copy.json");
  EXPECT_TRUE(v.has(HazardKind::data_race)) << v.text;
  EXPECT_TRUE(v.has(HazardKind::collective_mismatch)) << v.text;
}

TEST(ShippedScenarios, separate_comm_wait_before_copy_is_clean) {
  const Verdict v = run_file("te-async-separate-before-copy.json");
  EXPECT_TRUE(v.done);
  EXPECT_TRUE(v.kinds.empty()) << v.text;
}

TEST(ShippedScenarios, separate_comm_wait_after_copy_races) {
  const Verdict v = run_file("te-async-separate-after-copy.json");
  EXPECT_TRUE(v.has(HazardKind::data_race)) << v.text;
  EXPECT_FALSE(v.has(HazardKind::collective_mismatch)) << v.text;
}

TEST(ShippedScenarios, the_seed_design_points_have_eight_ranks) {
  for (const char* name : {"te-async-shared-before-copy.json", "te-async-shared-after-copy.json",
                           "te-async-separate-before-copy.json", "te-async-separate-after-copy.json"}) {
    EXPECT_EQ(load_scenario_file(testing::shipped_scenario(name)).ranks.size(), 8u) << name;
  }
}

TEST(ShippedScenarios, the_custom_program_reproduces_the_wait_after_copy_race) {
  const Scenario scenario = load_scenario_file(testing::shipped_scenario("custom-wait-after-copy.json"));
  const Verdict v = run(scenario);
  EXPECT_TRUE(v.has(HazardKind::data_race)) << v.text;
  EXPECT_NE(v.text.find("copy_back"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("amax_reduce"), std::string::npos) << v.text;
}

TEST(ShippedScenarios, the_custom_program_is_clean_once_the_wait_moves_before_the_copy) {
  Scenario scenario = load_scenario_file(testing::shipped_scenario("custom-wait-after-copy.json"));
  for (Rank& rank : scenario.ranks) {
    auto& program = rank.threads[0].program;
    ASSERT_EQ(program[6].name, "copy_back");
    ASSERT_EQ(program[8].name, "wait_amax");
    std::rotate(program.begin() + 6, program.begin() + 8, program.begin() + 9);  // wait, copy, update
  }
  const Verdict v = run(scenario);
  EXPECT_TRUE(v.done);
  EXPECT_TRUE(v.kinds.empty()) << "the checks' hand-computed expected values hold too\n" << v.text;
}

TEST(ShippedScenarios, the_ungrouped_p2p_exchange_deadlocks_and_is_clean_grouped) {
  Scenario scenario = load_scenario_file(testing::shipped_scenario("custom-p2p-exchange.json"));
  const Verdict ungrouped = run(scenario);
  EXPECT_TRUE(ungrouped.has(HazardKind::deadlock)) << ungrouped.text;
  for (Rank& rank : scenario.ranks) {
    for (Op& op : rank.threads[0].program) op.group = 1;
  }
  const Verdict grouped = run(scenario);
  EXPECT_TRUE(grouped.done);
  EXPECT_TRUE(grouped.kinds.empty()) << grouped.text;
  EXPECT_EQ(grouped.kinds.size(), 0u);
}

TEST(ShippedScenarios, an_amax_group_spanning_pipeline_stages_hangs_and_mismatches) {
  const Verdict v = run_file("pipeline-world-group.json");
  EXPECT_FALSE(v.done);
  EXPECT_TRUE(v.has(HazardKind::deadlock)) << v.text;
  EXPECT_TRUE(v.has(HazardKind::collective_mismatch)) << v.text;
}

TEST(ShippedScenarios, a_backward_reduction_tied_to_a_frozen_first_module_diverges_and_at_exit_is_clean) {
  const Verdict v = run_file("frozen-first-module-backward-reduction.json");
  EXPECT_TRUE(v.done) << v.text;
  EXPECT_TRUE(v.has(HazardKind::replica_divergence)) << v.text;
  const Scenario fixed = scenario_from_json(
      nlohmann::json::parse(R"({"protocol": "te-sync", "knobs": {"dp": 2, "modules": 2, "frozen": ["0"]}})"), "the fixed twin");
  const Verdict twin = run(fixed);
  EXPECT_TRUE(twin.done);
  EXPECT_TRUE(twin.kinds.empty()) << twin.text;
}

TEST(ShippedScenarios, static_slots_that_keep_a_skipped_experts_state_diverge_and_updating_every_slot_is_clean) {
  const Verdict v = run_file("static-slots-skipped-expert.json");
  EXPECT_TRUE(v.done) << v.text;
  EXPECT_TRUE(v.has(HazardKind::replica_divergence)) << v.text;
  EXPECT_FALSE(v.has(HazardKind::collective_mismatch)) << v.text;
  const Verdict twin = run(scenario_from_json(nlohmann::json::parse(R"({"protocol": "te-sync", "knobs": {"dp": 2,
      "modules": 2, "microbatches": 1, "skip": ["1:1:1"], "registration": "static", "unrun": "update"}})"), "the fixed twin"));
  EXPECT_TRUE(twin.done);
  EXPECT_TRUE(twin.kinds.empty()) << twin.text;
}

TEST(ShippedScenarios, positional_slots_shift_when_a_module_is_called_twice_and_keyed_slots_are_clean) {
  const Verdict v = run_file("positional-slots-repeated-module.json");
  EXPECT_TRUE(v.done) << v.text;
  EXPECT_TRUE(v.has(HazardKind::value_mismatch)) << v.text;
  EXPECT_FALSE(v.has(HazardKind::collective_mismatch)) << v.text;
  const Verdict twin = run(scenario_from_json(nlohmann::json::parse(R"({"protocol": "te-sync", "knobs": {"dp": 2,
      "modules": 3, "microbatches": 1, "repeat": ["0:1"], "slots": "keyed"}})"), "the fixed twin"));
  EXPECT_TRUE(twin.done);
  EXPECT_TRUE(twin.kinds.empty()) << twin.text;
}

TEST(ShippedScenarios, a_recompute_that_registers_again_mismatches_the_reference_and_one_that_skips_is_clean) {
  const Verdict v = run_file("recompute-registers-again.json");
  EXPECT_TRUE(v.done) << v.text;
  EXPECT_TRUE(v.has(HazardKind::value_mismatch)) << v.text;
  EXPECT_FALSE(v.has(HazardKind::replica_divergence)) << v.text;
  const Verdict twin = run(scenario_from_json(nlohmann::json::parse(R"({"protocol": "te-sync", "knobs": {"dp": 2,
      "modules": 2, "recompute": true, "recompute-amax": "skip"}})"), "the fixed twin"));
  EXPECT_TRUE(twin.done);
  EXPECT_TRUE(twin.kinds.empty()) << twin.text;
}

TEST(ShippedScenarios, a_sequence_parallel_gather_of_locally_scaled_shards_diverges_and_a_reduced_scale_is_clean) {
  const Verdict v = run_file("sp-gather-local-amax.json");
  EXPECT_TRUE(v.done) << v.text;
  EXPECT_TRUE(v.has(HazardKind::replica_divergence)) << v.text;
  EXPECT_NE(v.text.find("sp_gathered differs"), std::string::npos) << v.text;
  const Verdict twin = run(scenario_from_json(nlohmann::json::parse(R"({"protocol": "te-sync", "knobs": {"tp": 2,
      "dp": 1, "modules": 2, "sp-gather": "fp8", "sp-amax": "reduce"}})"), "the fixed twin"));
  EXPECT_TRUE(twin.done);
  EXPECT_TRUE(twin.kinds.empty()) << twin.text;
}

TEST(ShippedScenarios, an_fsdp_weight_amax_over_the_world_hangs_the_pipeline_and_over_the_mesh_is_clean) {
  const Verdict v = run_file("fsdp-world-amax-pipeline.json");
  EXPECT_FALSE(v.done);
  EXPECT_TRUE(v.has(HazardKind::deadlock)) << v.text;
  const Verdict twin = run(scenario_from_json(nlohmann::json::parse(R"({"protocol": "current-scaling", "knobs": {"dp": 2,
      "pp": 2, "fsdp": "inline", "fsdp-amax-group": "shard"}})"), "the fixed twin"));
  EXPECT_TRUE(twin.done);
  EXPECT_TRUE(twin.kinds.empty()) << twin.text;
}

TEST(ShippedScenarios, the_delayed_scaling_template_meets_its_sequential_reference) {
  const Verdict v = run_file("custom-template-amax.json");
  EXPECT_TRUE(v.done);
  EXPECT_TRUE(v.kinds.empty()) << v.text;
}

TEST(ShippedScenarios, an_empty_input_that_reduces_an_empty_amax_hangs_its_peer) {
  const Verdict v = run_file("custom-empty-input.json");
  EXPECT_FALSE(v.done);
  EXPECT_TRUE(v.has(HazardKind::deadlock)) << v.text;
}

TEST(ShippedScenarios, the_pipeline_template_passes_activations_stage_to_stage) {
  const Verdict v = run_file("custom-pipeline-template.json");
  EXPECT_TRUE(v.done);
  EXPECT_TRUE(v.kinds.empty()) << v.text;
}

}  // namespace
}  // namespace amaxcheck
