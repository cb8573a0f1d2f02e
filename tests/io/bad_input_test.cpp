// Malformed scenario files: each kind of mistake is an InputError that names the field path
// and what was expected.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

#include "io/json_text.h"
#include "io/scenario_json.h"
#include "shipped_files.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

using nlohmann::json;

struct BadInput {
  std::string name;
  std::function<void(json&)> spoil;
  std::string path;    ///< the field path the message must name
  std::string reason;  ///< and what it must say was expected
};

void PrintTo(const BadInput& input, std::ostream* os) { *os << input.name; }

/// The shipped hand-written program: program[0] fill, [1] local_amax, [2] record, [3] wait,
/// [4] all_reduce, [5] record, [6] copy, [7] scale_update, [8] work_wait, [9] device_synchronize.
json custom_program() { return testing::shipped_json("custom-wait-after-copy.json"); }
/// The shipped send/recv exchange: each rank's program[0] send, [1] recv.
json p2p_program() { return testing::shipped_json("custom-p2p-exchange.json"); }
json& op(json& doc, int rank, int index) { return doc["ranks"][rank]["threads"][0]["program"][index]; }
json protocol_doc() { return json{{"protocol", "te-async"}, {"knobs", {{"dp", 2}}}}; }

std::vector<BadInput> bad_inputs() {
  return {
      {"missing_ranks", [](json& d) { d.erase("ranks"); }, "memory: ranks:", "missing required field"},
      {"missing_op_kind", [](json& d) { op(d, 0, 2).erase("kind"); }, "ranks[0].threads[0].program[2].kind:",
       "missing required field"},
      {"missing_field_the_kind_needs", [](json& d) { op(d, 1, 4).erase("comm"); }, "ranks[1].threads[0].program[4].comm:",
       "missing required field"},
      {"wrong_type_for_a_number", [](json& d) { d["ranks"][0]["device"] = "zero"; }, "ranks[0].device:",
       "expected a non-negative integer, got a string"},
      {"negative_buffer_size", [](json& d) { d["ranks"][0]["buffers"][0]["size"] = -4; }, "ranks[0].buffers[0].size:",
       "expected a non-negative integer"},
      {"fractional_buffer_size", [](json& d) { d["ranks"][0]["buffers"][0]["size"] = 2.5; }, "ranks[0].buffers[0].size:",
       "expected a non-negative integer"},
      {"buffer_size_past_32_bits", [](json& d) { d["ranks"][0]["buffers"][0]["size"] = 4294967297ull; },
       "ranks[0].buffers[0].size:", "expected an integer in [0, 4294967295]"},
      {"margin_below_its_range", [](json& d) { op(d, 0, 7)["scale"]["margin"] = -1000; },
       "ranks[0].threads[0].program[7].scale.margin:", "expected an integer in [-64, 64]"},
      {"wrong_type_for_a_list", [](json& d) { d["ranks"][0]["threads"][0]["program"] = "fill"; },
       "ranks[0].threads[0].program:", "expected an array"},
      {"top_level_not_an_object", [](json& d) { d = json::array(); }, "(top level):", "expected an object"},
      {"unknown_op_kind", [](json& d) { op(d, 0, 4)["kind"] = "all_reduce_async"; }, "ranks[0].threads[0].program[4].kind:",
       "unknown op kind \"all_reduce_async\"; expected one of: fill"},
      {"misspelt_field", [](json& d) { op(d, 0, 0)["strem"] = "compute"; }, "ranks[0].threads[0].program[0].strem:",
       "unknown field"},
      {"bad_enum_value", [](json& d) { op(d, 0, 4)["reduce"] = "avg"; }, "ranks[0].threads[0].program[4].reduce:",
       "expected max|sum"},
      {"unknown_stream_name", [](json& d) { op(d, 0, 0)["stream"] = "comptue"; }, "ranks[0].threads[0].program[0].stream:",
       "no stream named \"comptue\"; expected one of: compute, nccl"},
      {"stream_index_out_of_range", [](json& d) { op(d, 1, 0)["stream"] = 7; }, "ranks[1].threads[0].program[0].stream:",
       "stream 7 out of range (the rank has 2 streams)"},
      {"event_index_out_of_range", [](json& d) { op(d, 0, 8)["event"] = 9; }, "ranks[0].threads[0].program[8].event:",
       "event 9 out of range"},
      {"comm_index_out_of_range", [](json& d) { op(d, 0, 4)["comm"] = 3; }, "ranks[0].threads[0].program[4].comm:",
       "communicator 3 out of range"},
      {"comm_member_out_of_range", [](json& d) { d["comms"][0]["members"][1] = 5; }, "comms[0].members[1]:",
       "rank 5 out of range (the scenario has 2 ranks)"},
      {"rank_twice_in_a_comm", [](json& d) { d["comms"][0]["members"] = {0, 1, 0}; }, "comms[0].members[2]:",
       "rank 0 appears twice"},
      {"collective_on_a_comm_the_rank_is_not_in", [](json& d) { d["comms"][0]["members"] = {0}; },
       "ranks[1].threads[0].program[4].comm:", "rank 1 is not a member of communicator \"amax\""},
      {"buffer_range_past_its_end", [](json& d) { op(d, 0, 1)["reads"][0]["count"] = 9; },
       "ranks[0].threads[0].program[1].reads[0]:", "range [0, 9) runs past the end of buffer \"x\" (size 4)"},
      {"offset_past_the_end", [](json& d) { op(d, 0, 6)["writes"][0]["offset"] = 2; },
       "ranks[0].threads[0].program[6].writes[0]:", "runs past the end of buffer \"amax_history\""},
      {"fill_value_count", [](json& d) { op(d, 0, 0)["values"] = {1, 2, 3}; }, "ranks[0].threads[0].program[0].values:",
       "expected 4 values"},
      {"scale_update_history_size", [](json& d) { op(d, 0, 7)["scale"]["history_len"] = 3; },
       "ranks[0].threads[0].program[7].reads[0].count:", "expected 3 (history_len x tensors), got 2"},
      {"copy_count_mismatch", [](json& d) { op(d, 1, 6)["writes"][0]["count"] = 2; },
       "ranks[1].threads[0].program[6].writes[0].count:", "expected 1 (the matching read's count), got 2"},
      {"duplicate_buffer_name", [](json& d) { d["ranks"][0]["buffers"][1]["name"] = "x"; }, "ranks[0].buffers[1]:",
       "duplicate buffer name \"x\""},
      {"ambiguous_comm_name", [](json& d) { d["comms"].push_back(json{{"name", "amax"}, {"members", {0, 1}}}); },
       "ranks[0].threads[0].program[4].comm:",
       "communicator name \"amax\" is ambiguous: communicator 0 and 1 have it; refer to one by index"},
      {"buffer_init_size", [](json& d) { d["ranks"][0]["buffers"][3]["init"] = {1, 2}; }, "ranks[0].buffers[3].init:",
       "expected 1 values (the buffer's size) or none, got 2"},
      {"check_replica_rank_out_of_range", [](json& d) { d["checks"][0]["replicas"][1]["rank"] = 4; },
       "checks[0].replicas[1].rank:", "rank 4 out of range"},
      {"check_expected_size", [](json& d) { d["checks"][1]["expected"] = {1, 2, 3}; }, "checks[1].expected:",
       "expected 1 values (the replicas' count) or none, got 3"},
      {"p2p_peer_out_of_range", [](json& d) { d = p2p_program(); op(d, 0, 0)["peer"] = 2; }, "ranks[0].threads[0].program[0].peer:",
       "peer member 2 out of range (the communicator has 2 members)"},
      {"p2p_missing_peer", [](json& d) { d = p2p_program(); op(d, 1, 1).erase("peer"); }, "ranks[1].threads[0].program[1].peer:",
       "missing required field"},
      {"group_on_a_kernel", [](json& d) { op(d, 0, 0)["group"] = 1; }, "ranks[0].threads[0].program[0].group:",
       "only send and recv ops can be grouped, not fill"},
      {"group_not_consecutive", [](json& d) {
         d = p2p_program();
         auto& program = d["ranks"][0]["threads"][0]["program"];
         program[0]["group"] = 1;
         program[1]["group"] = 1;
         program.push_back(json{{"kind", "device_synchronize"}});
         program.push_back(program[0]);
       }, "ranks[0].threads[0].program[3].group:", "group 1 was used earlier in this thread"},
      {"no_ranks", [](json& d) { d = json{{"ranks", json::array()}}; }, "memory: ranks:", "expected at least one rank"},
      {"comm_without_members", [](json& d) { d["comms"][0]["members"] = json::array(); }, "comms[0].members:",
       "expected at least one member rank"},
      {"group_over_two_streams", [](json& d) {
         d = p2p_program();
         d["ranks"][0]["streams"] = {"compute", "side"};
         auto& program = d["ranks"][0]["threads"][0]["program"];
         program[0]["group"] = 1;
         program[1]["group"] = 1;
         program[1]["stream"] = "side";
       }, "ranks[0].threads[0].program[1].group:", "group 1 mixes streams or communicators"},
      {"host_wait_for_no_signal", [](json& d) {
         d["ranks"][0]["flags"] = {"ready"};
         op(d, 0, 9) = json{{"kind", "host_wait"}, {"flag", "ready"}, {"count", 0}};
       }, "ranks[0].threads[0].program[9].count:", "expected a signal count of at least 1"},
      {"copy_without_writes", [](json& d) { op(d, 0, 6)["writes"] = json::array(); }, "ranks[0].threads[0].program[6].writes:",
       "copy expects as many write ranges as read ranges (at least one), got 1 and 0"},
      {"scale_update_without_history", [](json& d) { op(d, 0, 7)["scale"]["history_len"] = 0; },
       "ranks[0].threads[0].program[7].scale.history_len:", "expected a history length of at least 1"},
      {"root_out_of_range", [](json& d) {
         op(d, 0, 4)["kind"] = "broadcast";
         op(d, 0, 4).erase("reduce");
         op(d, 0, 4)["root"] = 2;
       }, "ranks[0].threads[0].program[4].root:", "root member 2 out of range (the communicator has 2 members)"},
      {"check_without_replicas", [](json& d) { d["checks"][0]["replicas"] = json::array(); }, "checks[0].replicas:",
       "expected at least one replica"},
      {"check_replicas_of_two_sizes", [](json& d) { d["checks"][0]["replicas"][1]["count"] = 1; }, "checks[0].replicas[1].count:",
       "expected 2 (every replica has the first one's count), got 1"},
      {"unknown_protocol", [](json& d) { d = protocol_doc(); d["protocol"] = "te-magic"; }, "protocol:",
       "unknown protocol \"te-magic\"; expected one of: te-sync, te-async, current-scaling"},
      {"unknown_knob", [](json& d) { d = protocol_doc(); d["knobs"]["colour"] = "red"; }, "knobs.colour:", "unknown knob"},
      {"bad_knob_value", [](json& d) { d = protocol_doc(); d["knobs"]["comm"] = "both"; }, "knobs.comm:",
       "expected shared|separate, got \"both\""},
      {"knob_number_out_of_range", [](json& d) { d = protocol_doc(); d["knobs"]["dp"] = 0; }, "knobs.dp:",
       "expected an integer in [1, 65536]"},
      {"knob_rank_out_of_range", [](json& d) { d = protocol_doc(); d["knobs"]["skip"] = {"9:0"}; }, "knobs.skip:",
       "rank 9 out of range in \"9:0\" (world size 2)"},
      {"rank_twice_in_an_explicit_group", [](json& d) { d = protocol_doc(); d["knobs"]["group"] = "0,0,1"; }, "knobs.group:",
       "rank 0 appears twice in rank list 0"},
      {"shared_comm_over_a_non_dp_group", [](json& d) { d = protocol_doc(); d["knobs"]["group"] = "0/1"; d["knobs"]["tp"] = 2; d["knobs"]["dp"] = 1; d["knobs"]["comm"] = "shared"; d["knobs"]["group"] = "tp"; },
       "knobs.comm:", "shared needs each amax reduction group to be a data-parallel (DP x CP) group"},
  };
}

class BadScenario : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadScenario, is_an_input_error_naming_the_field_and_what_was_expected) {
  json doc = custom_program();
  GetParam().spoil(doc);
  try {
    scenario_from_json(doc, "memory");
    FAIL() << "accepted a malformed scenario: " << doc.dump().substr(0, 200);
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(GetParam().path), std::string::npos) << message;
    EXPECT_NE(message.find(GetParam().reason), std::string::npos) << message;
    EXPECT_EQ(message.rfind("memory: ", 0), 0u) << "names the source first: " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, BadScenario, ::testing::ValuesIn(bad_inputs()),
                         [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

TEST(BadScenarioFile, a_json_syntax_error_names_the_line_and_column) {
  const auto path = std::filesystem::temp_directory_path() / ("amaxcheck_bad_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream file(path);
    file << "{\n  \"ranks\": [\n    {\"name\": \"rank0\",, }\n  ]\n}\n";
  }
  try {
    load_scenario_file(path.string());
    FAIL() << "accepted invalid JSON";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ":3:22: invalid JSON"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(BadScenarioFile, a_key_given_twice_in_one_object_names_the_field) {
  // nlohmann keeps the last of two, silently: the file was checked with a value its author may
  // not have meant.
  const auto path = std::filesystem::temp_directory_path() / ("amaxcheck_dup_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream file(path);
    file << "{\"protocol\": \"te-async\",\n \"knobs\": {\"dp\": 2, \"wait\": \"before-copy\",\n  \"wait\": \"after-copy\"}}\n";
  }
  try {
    load_scenario_file(path.string());
    FAIL() << "accepted a key given twice";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": field 'knobs.wait': given twice in one object"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
  // The same key in two objects is two keys.
  EXPECT_NO_THROW(parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})", "memory"));
  try {
    parse_json_text(R"({"step": 1, "op": "a", "step": 2})", "trace.jsonl", 7);
    FAIL() << "accepted a key given twice";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "trace.jsonl:7: field 'step': given twice in one object (expected each key once)");
  }
  // In an object of many keys (a knobs object) as in a small one, and in a later element of an
  // array, named by its index.
  std::string many = "{";
  for (int k = 0; k < 20; ++k) many += fmt::format("\"k{}\": {}, ", k, k);
  many += "\"k3\": 0}";
  try {
    parse_json_text(many, "memory");
    FAIL() << "accepted a key given twice: " << many;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'k3': given twice"), std::string::npos) << e.what();
  }
  try {
    parse_json_text(R"({"ranks": [{"name": "a"}, [1, 2], {"name": "b", "name": "c"}]})", "memory");
    FAIL() << "accepted a key given twice";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'ranks[2].name': given twice"), std::string::npos) << e.what();
  }
}

TEST(BadScenarioFile, a_missing_file_is_an_input_error) {
  EXPECT_THROW(load_scenario_file("/nonexistent/amaxcheck/scenario.json"), InputError);
}

TEST(BadScenario, the_unspoilt_custom_program_is_accepted) {
  EXPECT_NO_THROW(scenario_from_json(custom_program(), "memory"));
}

}  // namespace
}  // namespace amaxcheck
