// Scenario -> JSON -> Scenario gives back the same scenario, for generated and hand-written ones.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <unistd.h>

#include "io/scenario_json.h"
#include "model/builder.h"
#include "protocols/protocol.h"
#include "scenario_equal.h"

namespace amaxcheck {
namespace {

ProtocolKnobs knobs_of(ProtocolName protocol, std::vector<std::pair<std::string, std::string>> settings) {
  ProtocolKnobs knobs;
  knobs.protocol = protocol;
  for (const auto& [name, value] : settings) set_knob(knobs, name, value);
  return knobs;
}

TEST(ScenarioJson, generated_protocol_scenarios_round_trip_exactly) {
  const std::vector<ProtocolKnobs> cases = {
      knobs_of(ProtocolName::te_sync, {}),
      knobs_of(ProtocolName::te_async, {{"comm", "shared"}, {"wait", "after-copy"}, {"dp", "4"}}),
      knobs_of(ProtocolName::te_async, {{"grad-op", "reduce-scatter"}, {"tp", "2"}, {"dp", "2"}, {"recompute", "on"},
                                        {"kernels", "serialized"}, {"history", "3"}, {"algo", "most_recent"}, {"margin", "2"}}),
      knobs_of(ProtocolName::current_scaling, {{"tp", "2"}, {"dp", "2"}, {"pp", "2"}, {"skip", "1:0:1"}, {"eval", "1:0"}}),
      knobs_of(ProtocolName::te_sync, {{"input", "0:0:0:fwd=inf"}, {"input", "1:1:1:bwd:0=nan,0,1,-0"}}),
      knobs_of(ProtocolName::te_sync, {{"pp", "3"}, {"microbatches", "3"}, {"stage-modules", "1,2,1"}}),  // grouped send/recv
  };
  for (const ProtocolKnobs& knobs : cases) {
    const Scenario original = build_protocol(knobs);
    SCOPED_TRACE(original.source);
    const Scenario copy = scenario_from_json(scenario_to_json(original), "memory");
    testing::expect_same_scenario(original, copy);
    // And through text, as the file does.
    const Scenario from_text = scenario_from_json(nlohmann::json::parse(scenario_to_text(original)), "memory");
    testing::expect_same_scenario(original, from_text);
  }
}

TEST(ScenarioJson, non_finite_and_extreme_floats_survive_the_text_form) {
  ScenarioBuilder b("floats");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId s = b.stream(r, "compute");
  const std::vector<float> values = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                     FLT_MAX, std::numeric_limits<float>::denorm_min(), -0.0f, 0.1f};
  const BufferId buf = b.buffer(r, "x", 6, values);
  Op fill;
  fill.kind = OpKind::fill;
  fill.stream = s;
  fill.writes = {Range{buf, 0, 6}};
  fill.values = values;
  b.op(r, t, fill);
  const Scenario original = b.build();
  const Scenario copy = scenario_from_json(nlohmann::json::parse(scenario_to_text(original)), "memory");
  testing::expect_same_scenario(original, copy);
  // NaN round-trips as "nan" (compared separately: NaN != NaN).
  EXPECT_EQ(scenario_to_json(original)["ranks"][0]["buffers"][0]["init"][0], "inf");
}

TEST(ScenarioJson, saved_files_load_back_and_leave_no_temporary_behind) {
  const auto dir = std::filesystem::temp_directory_path() / ("amaxcheck_io_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "scenario.json").string();
  const Scenario original = build_protocol(knobs_of(ProtocolName::te_async, {{"dp", "3"}}));
  save_scenario_file(original, path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  Scenario loaded = load_scenario_file(path);
  testing::expect_same_scenario(original, loaded);
  std::filesystem::remove_all(dir);
}

TEST(ScenarioJson, protocol_form_builds_the_same_scenario_as_the_command_line) {
  const nlohmann::json doc = {{"protocol", "te-async"},
                              {"knobs", {{"comm", "shared"}, {"dp", 4}, {"recompute", true}, {"skip", {"1:0"}}, {"group", {{0, 1, 2, 3}}}}}};
  const Scenario from_file = scenario_from_json(doc, "memory");
  const Scenario from_knobs = build_protocol(knobs_of(
      ProtocolName::te_async, {{"comm", "shared"}, {"dp", "4"}, {"recompute", "on"}, {"skip", "1:0"}, {"group", "0-3"}}));
  testing::expect_same_scenario(from_knobs, from_file);
  EXPECT_EQ(from_file.source, "amaxcheck check te-async --comm shared --dp 4 --group 0,1,2,3 --skip 1:0 --recompute");
}

}  // namespace
}  // namespace amaxcheck
