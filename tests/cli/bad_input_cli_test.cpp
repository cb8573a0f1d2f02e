// The exit-code contract holds for hostile input: whatever a scenario or trace file holds, the
// CLI exits 2 with the file, the line or the field, never 3 (internal) or a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "util/atomic_file.h"
#include "util/utf8.h"
#include "run_cli.h"

namespace amaxcheck::cli {
namespace {

std::string write_file(const std::string& name, const std::string& content) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

/// The shipped hand-written program (seed hazard 1 in full).
nlohmann::json shipped_custom_program() {
  std::ifstream in(std::string(std::getenv("AMAXCHECK_ROOT")) + "/traces/scenarios/custom-wait-after-copy.json");
  return nlohmann::json::parse(in);
}

/// The trace of a hazard found in a small racy protocol point.
std::string hazard_trace() {
  const std::string path = temp_path("hardening_hazard.jsonl");
  const Ran r = amaxcheck({"check", "te-async", "--wait", "after-copy", "--dp", "2", "--modules", "1", "--iters", "1",
                           "--trace-out", path, "--quiet"});
  EXPECT_EQ(r.code, exit_hazard) << r.out << r.err;
  return path;
}

TEST(HostileScenario, a_deeply_nested_file_is_bad_input_naming_the_depth_limit) {
  const std::string path = write_file("deep.json", std::string(200000, '[') + std::string(200000, ']'));
  const Ran r = amaxcheck({"check", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find(path + ":1: field '[0][0]"), std::string::npos) << r.err.substr(0, 300);
  EXPECT_NE(r.err.find("nested deeper than 64 levels"), std::string::npos) << r.err.substr(0, 300);
}

TEST(HostileScenario, a_number_beyond_a_double_names_the_file_line_and_field) {
  const std::string path = write_file("overflow.json", "{\"protocol\": \"te-async\",\n \"knobs\": {\"dp\": 1e400}}\n");
  const Ran r = amaxcheck({"check", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find(path + ":2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("field 'knobs.dp': number 1e400 overflows a double"), std::string::npos) << r.err;
}

TEST(HostileScenario, a_null_knob_is_a_bad_knob_value) {
  const std::string path = write_file("null_knob.json", R"({"protocol": "te-async", "knobs": {"dp": null}})");
  const Ran r = amaxcheck({"check", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find("knobs.dp: expected a string, number or boolean"), std::string::npos) << r.err;
}

TEST(HostileScenario, an_empty_top_level_key_is_named_as_one) {
  const std::string path = write_file("empty_key.json", R"({"": 1, "ranks": []})");
  const Ran r = amaxcheck({"check", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find(path + ": \"\" (an empty key): unknown field; expected one of: name"), std::string::npos)
      << r.err;
}

// The paths of these tests are not UTF-8, and the program's messages name them: a failure
// message streams them escaped, since GoogleTest writes it raw into the XML report that meson
// reads, and a stray byte there makes meson fail with a traceback instead of the test's name.
TEST(HostileScenario, a_path_that_is_not_utf8_is_printed_escaped_and_the_check_runs) {
  nlohmann::json doc = shipped_custom_program();
  doc.erase("name");  // the scenario is then named after its file
  doc.erase("source");
  const std::string path = write_file("not_utf8_\xff\xfe.json", doc.dump());
  const std::string trace = temp_path("not_utf8.jsonl");
  const Ran r = amaxcheck({"check", path, "--trace-out", trace, "--quiet", "--json"});
  EXPECT_EQ(r.code, exit_hazard) << escape_invalid_utf8(r.err);
  EXPECT_NE(r.out.find("not_utf8_\\\\xFF\\\\xFE.json"), std::string::npos) << r.out.substr(0, 400);
  const Ran replay = amaxcheck({"replay", trace});
  EXPECT_EQ(replay.code, exit_hazard) << escape_invalid_utf8(replay.err);
  std::filesystem::remove(path);
}

TEST(HostileScenario, trace_and_output_paths_that_are_not_utf8_go_into_json_escaped) {
  // Once an internal error: nlohmann refuses to dump a string that is not UTF-8.
  const std::string trace = temp_path("trace_\xff.jsonl");
  const Ran r = amaxcheck({"check", "te-async", "--wait", "after-copy", "--dp", "2", "--modules", "1", "--iters", "1",
                           "--trace-out", trace, "--quiet", "--json"});
  EXPECT_EQ(r.code, exit_hazard) << escape_invalid_utf8(r.err);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["trace"], temp_path("trace_\\xFF.jsonl"));
  EXPECT_EQ(j.at("hazards").at(0).at("replay"), "amaxcheck replay $'" + temp_path("trace_\\xff.jsonl") + "'");
  const Ran replay = amaxcheck({"replay", trace, "--json"});
  EXPECT_EQ(replay.code, exit_hazard) << escape_invalid_utf8(replay.err);
  EXPECT_EQ(nlohmann::json::parse(replay.out)["trace"], temp_path("trace_\\xFF.jsonl"));
  const std::string shrunk = temp_path("shrunk_\xff.jsonl");
  const Ran s = amaxcheck({"shrink", trace, "-o", shrunk});
  EXPECT_EQ(s.code, exit_clean) << escape_invalid_utf8(s.err);
  std::filesystem::remove(trace);
  std::filesystem::remove(shrunk);
}

TEST(HostileScenario, a_split_of_unnamed_ranks_replays_though_its_communicators_share_a_name) {
  // --one-rank-comms names each split "COMM@RANK NAME": "c@" twice for unnamed ranks. The trace
  // refers to them by index, so it replays; only a name that stands for two is refused.
  nlohmann::json rank = {{"streams", {"s", "t"}},
                         {"buffers", {{{"name", "x"}, {"size", 1}, {"init", {1}}}, {{"name", "y"}, {"size", 1}}}},
                         {"threads", {{{"name", "main"},
                                       {"program",
                                        {{{"kind", "all_reduce"}, {"name", "ar"}, {"stream", "s"}, {"comm", "c"},
                                          {"reduce", "max"}, {"reads", {{{"buffer", "x"}}}}, {"writes", {{{"buffer", "x"}}}}},
                                         {{"kind", "copy"}, {"name", "cp"}, {"stream", "t"}, {"reads", {{{"buffer", "x"}}}},
                                          {"writes", {{{"buffer", "y"}}}}}}}}}}};
  const nlohmann::json doc = {{"name", "split"}, {"comms", {{{"name", "c"}, {"members", {0, 1}}}}}, {"ranks", {rank, rank}}};
  const std::string scenario = write_file("unnamed_ranks.json", doc.dump());
  const std::string trace = temp_path("unnamed_ranks.jsonl");
  const Ran check = amaxcheck({"check", scenario, "--one-rank-comms", "--trace-out", trace, "--quiet"});
  ASSERT_EQ(check.code, exit_hazard) << check.out << check.err;
  const Ran replay = amaxcheck({"replay", trace});
  EXPECT_EQ(replay.code, exit_hazard) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("data_race"), std::string::npos) << replay.out;
}

TEST(HostileScenario, knob_options_with_a_scenario_file_are_bad_input_not_ignored) {
  // Once ignored: `check FILE --dp 4 --comm shared` checked the file as it is, another design.
  const std::string path = std::string(std::getenv("AMAXCHECK_ROOT")) + "/traces/scenarios/custom-wait-after-copy.json";
  const Ran r = amaxcheck({"check", path, "--dp", "4", "--comm", "shared"});
  EXPECT_EQ(r.code, exit_bad_input) << r.out << r.err;
  EXPECT_NE(r.err.find("--comm, --dp: protocol knob options for a protocol name"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  const Ran one = amaxcheck({"check", path, "--iters", "2"});
  EXPECT_EQ(one.code, exit_bad_input) << one.err;
  EXPECT_NE(one.err.find("--iters: protocol knob option for a protocol name"), std::string::npos) << one.err;
  // A mistyped protocol name is that, knobs or not.
  const Ran typo = amaxcheck({"check", "te-asyn", "--dp", "4"});
  EXPECT_EQ(typo.code, exit_bad_input) << typo.err;
  EXPECT_NE(typo.err.find("te-asyn: not a protocol"), std::string::npos) << typo.err;
}

TEST(HostileScenario, a_misspelt_backend_is_bad_input_not_the_simulator) {
  const Ran r = amaxcheck({"check", "te-sync", "--dp", "2", "--iters", "1", "--backend", "GPU"});
  EXPECT_EQ(r.code, exit_bad_input) << r.out << r.err;
  EXPECT_NE(r.err.find("--backend: expected sim|gpu, got \"GPU\""), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "nothing was checked";
}

TEST(OutputPaths, a_trace_folder_that_cannot_be_made_is_bad_input_before_the_check_runs) {
  const std::string file = write_file("a_plain_file", "x");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--trace-out", file + "/traces/t.jsonl"}, {"--junit-xml", file + "/j.xml"}}) {
    std::vector<std::string> command = {"check", "te-sync", "--dp", "2", "--modules", "1", "--iters", "1", "--runs", "1"};
    command.insert(command.end(), args.begin(), args.end());
    const Ran r = amaxcheck(command);
    EXPECT_EQ(r.code, exit_bad_input) << args[0] << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(file + " is not a folder"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("verdict"), std::string::npos) << "refused before the exploration\n" << r.out;
  }
}

TEST(OutputPaths, a_scenario_path_that_cannot_be_looked_at_is_bad_input) {
  // A link to itself: once an internal error from std::filesystem::exists.
  const std::string loop = temp_path("link_loop.json");
  std::filesystem::remove(loop);
  std::filesystem::create_symlink(loop, loop);
  const Ran r = amaxcheck({"check", loop});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find(loop + ": cannot look at this scenario file"), std::string::npos) << r.err;
  std::filesystem::remove(loop);
}

TEST(OutputPaths, a_folder_given_as_an_input_file_is_named_as_a_folder) {
  // An ifstream opens a folder and reads nothing: once "unexpected end of input" for a
  // scenario or a suite, "empty trace" for a trace.
  const std::string folder = temp_path("a_folder.json");
  std::filesystem::create_directories(folder);
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"check", folder}, "a folder, not a scenario file"},
      {{"suite", folder}, "a folder, not a suite file"},
      {{"replay", folder}, "a folder, not a file"},
  };
  for (const auto& [args, message] : cases) {
    const Ran r = amaxcheck(args);
    EXPECT_EQ(r.code, exit_bad_input) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(folder + ": " + message), std::string::npos) << args[0] << ": " << r.err;
  }
}

TEST(OutputPaths, an_output_that_would_replace_an_input_is_bad_input) {
  nlohmann::json doc = shipped_custom_program();
  const std::string scenario = write_file("replaced.json", doc.dump());
  const Ran check = amaxcheck({"check", scenario, "--trace-out", scenario});
  EXPECT_EQ(check.code, exit_bad_input) << check.err;
  EXPECT_NE(check.err.find("--trace-out " + scenario + ": the same file as the scenario file"), std::string::npos) << check.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(scenario)), doc) << "the scenario is untouched";
  const std::string trace = hazard_trace();
  const Ran both = amaxcheck({"check", scenario, "--trace-out", trace, "--junit-xml", trace});
  EXPECT_EQ(both.code, exit_bad_input) << both.err;
  EXPECT_NE(both.err.find("--junit-xml " + trace + ": the same file as the --trace-out"), std::string::npos) << both.err;
  const std::string before = read_file(trace);
  // Another spelling of the same path.
  const std::string respelled = (std::filesystem::path(trace).parent_path() / "." / std::filesystem::path(trace).filename()).string();
  const Ran exported = amaxcheck({"export", trace, "--perfetto", respelled});
  EXPECT_EQ(exported.code, exit_bad_input) << exported.err;
  EXPECT_NE(exported.err.find("the same file as the trace"), std::string::npos) << exported.err;
  const Ran shrunk = amaxcheck({"shrink", trace, "-o", trace});
  EXPECT_EQ(shrunk.code, exit_bad_input) << shrunk.err;
  EXPECT_EQ(read_file(trace), before) << "the trace is untouched";
  // An empty path is named by its option (it once read ": cannot rename the temporary file").
  const Ran empty = amaxcheck({"shrink", trace, "-o", ""});
  EXPECT_EQ(empty.code, exit_bad_input) << empty.err;
  EXPECT_NE(empty.err.find("--output: expected a file path, got an empty one"), std::string::npos) << empty.err;
}

TEST(MemoryLimit, a_four_billion_element_buffer_is_refused_with_the_estimate) {
  nlohmann::json doc = shipped_custom_program();
  doc["ranks"][0]["buffers"].push_back({{"name", "huge"}, {"size", 4294967295u}});
  const std::string path = write_file("huge_buffer.json", doc.dump());
  const Ran r = amaxcheck({"check", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find(path + " would need about "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GiB (scenario"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("above the limit of 8.0 GiB (--max-memory"), std::string::npos) << r.err;
}

TEST(MemoryLimit, an_oversized_protocol_point_is_refused_before_it_is_built) {
  const Ran r = amaxcheck({"check", "te-async", "--dp", "1024", "--modules", "8", "--fwd-tensors", "64", "--bwd-tensors",
                           "64", "--history", "4096", "--elems", "4096", "--iters", "1", "--microbatches", "1"});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find("this protocol point would need about "), std::string::npos) << r.err;
}

TEST(MemoryLimit, rank_templates_are_refused_before_they_expand) {
  // 600 KB of template standing for 65,536 ranks of 2,000 ops each: once expanded first, it
  // took all the memory there was before any estimate ran.
  nlohmann::json fill = {{"kind", "fill"}, {"name", "f"}, {"stream", "s"}, {"writes", {{{"buffer", "x"}}}}, {"values", {1}}};
  nlohmann::json rank = {{"for", nlohmann::json::array()}, {"streams", {"s"}}, {"buffers", {{{"name", "x"}, {"size", 1}}}},
                         {"threads", {{{"name", "main"}, {"program", nlohmann::json::array()}}}}};
  for (int r = 0; r < 65536; ++r) rank["for"].push_back(r);
  for (int i = 0; i < 2000; ++i) rank["threads"][0]["program"].push_back(fill);
  const std::string path = write_file("template_bomb.json", nlohmann::json{{"name", "bomb"}, {"ranks", {rank}}}.dump());
  const Ran r = amaxcheck({"check", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find(path + ": the expanded rank templates of this file would need about "), std::string::npos) << r.err;
  // The same template at 4 ranks is read and checked as before.
  rank["for"] = {0, 1, 2, 3};
  const std::string small = write_file("template_small.json", nlohmann::json{{"name", "small"}, {"ranks", {rank}}}.dump());
  const Ran ok = amaxcheck({"check", small, "--runs", "1"});
  EXPECT_EQ(ok.code, exit_clean) << ok.err;
}

TEST(MemoryLimit, the_same_point_in_a_file_is_refused_before_it_is_built) {
  const std::string path = write_file("big_point.json", R"({"protocol": "te-async", "knobs": {"dp": 1024, "modules": 8,
    "fwd-tensors": 64, "bwd-tensors": 64, "history": 4096, "elems": 4096}})");
  const Ran r = amaxcheck({"check", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find(path + ": this protocol point would need about "), std::string::npos) << r.err;
}

TEST(MemoryLimit, a_negative_max_memory_is_bad_input_not_no_limit) {
  // CLI11's size reader takes "-1" as 2^64 - 1: the limit was silently gone.
  for (const std::string value : {"-1", "-2G"}) {
    const Ran r = amaxcheck({"check", "te-sync", "--dp", "2", "--modules", "1", "--iters", "1", "--max-memory", value});
    EXPECT_EQ(r.code, exit_bad_input) << value << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("--max-memory: expected a size of 0 or more"), std::string::npos) << r.err;
  }
}

TEST(MemoryLimit, max_memory_lowers_and_raises_the_limit) {
  const std::vector<std::string> point = {"check", "te-sync", "--dp", "2", "--modules", "1", "--iters", "1", "--quiet"};
  std::vector<std::string> low = point, none = point;
  low.insert(low.end(), {"--max-memory", "1M"});
  none.insert(none.end(), {"--max-memory", "0"});
  const Ran refused = amaxcheck(low);
  EXPECT_EQ(refused.code, exit_bad_input) << refused.err;
  const std::string suggestion = "above the limit of 1 MiB (--max-memory ";
  const std::size_t at = refused.err.find(suggestion);
  ASSERT_NE(at, std::string::npos) << refused.err;
  // The value the message suggests is enough.
  std::vector<std::string> raised = point;
  const std::size_t begin = at + suggestion.size();
  raised.insert(raised.end(), {"--max-memory", refused.err.substr(begin, refused.err.find(' ', begin) - begin)});
  EXPECT_EQ(amaxcheck(raised).code, exit_clean) << raised.back();
  EXPECT_EQ(amaxcheck(point).code, exit_clean);
  EXPECT_EQ(amaxcheck(none).code, exit_clean);
}

/// The limit the refusal at --max-memory 1M suggests: just above the estimate up front.
std::string suggested_limit(std::vector<std::string> args) {
  args.insert(args.end(), {"--max-memory", "1M"});
  const Ran refused = amaxcheck(args);
  const std::string suggestion = "(--max-memory ";
  const std::size_t at = refused.err.find(suggestion);
  if (refused.code != exit_bad_input || at == std::string::npos) return "";
  const std::size_t begin = at + suggestion.size();
  return refused.err.substr(begin, refused.err.find(' ', begin) - begin);
}

TEST(MemoryLimit, a_plain_check_counts_a_recorded_run_only_once_it_finds_a_hazard) {
  const std::vector<std::string> hazard = {"check", "te-async", "--wait", "after-copy", "--dp", "32", "--iters", "1", "--quiet"};
  const std::string limit = suggested_limit(hazard);
  ASSERT_FALSE(limit.empty());
  // Up front the check fits (no steps counted); the hazard's recorded run does not.
  std::vector<std::string> limited = hazard;
  limited.insert(limited.end(), {"--max-memory", limit});
  const Ran found = amaxcheck(limited);
  EXPECT_EQ(found.code, exit_bad_input) << found.err;
  EXPECT_NE(found.err.find("recording the trace of the hazard found in protocol point"), std::string::npos) << found.err;
  EXPECT_NE(found.err.find("recorded steps "), std::string::npos) << found.err;
  // Without the limit the same check finds its hazard and records it.
  std::vector<std::string> unlimited = hazard;
  unlimited.insert(unlimited.end(), {"--max-memory", "0", "--trace-out", temp_path("recorded_hazard.jsonl")});
  EXPECT_EQ(amaxcheck(unlimited).code, exit_hazard);
  // The clean point records nothing, so its own up-front limit is enough.
  std::vector<std::string> clean = {"check", "te-async", "--dp", "32", "--iters", "1", "--quiet", "--runs", "20"};
  const std::string clean_limit = suggested_limit(clean);
  ASSERT_FALSE(clean_limit.empty());
  clean.insert(clean.end(), {"--max-memory", clean_limit});
  EXPECT_EQ(amaxcheck(clean).code, exit_clean);
  // --check-determinism records runs up front, so there the steps count before any run.
  std::vector<std::string> determinism = limited;
  determinism.push_back("--check-determinism");
  const Ran refused = amaxcheck(determinism);
  EXPECT_EQ(refused.code, exit_bad_input) << refused.err;
  EXPECT_NE(refused.err.find("this protocol point would need"), std::string::npos) << refused.err;
}

TEST(HostileTrace, a_number_beyond_a_double_names_the_trace_line_and_field) {
  std::vector<std::string> lines = read_lines(hazard_trace());
  ASSERT_GT(lines.size(), 4u);
  const std::size_t at = lines[3].find("\"chosen\":");
  ASSERT_NE(at, std::string::npos) << lines[3];
  lines[3].insert(at, "\"start_us\": 21e308, ");
  const std::string path = write_file("overflow.jsonl", join_lines(lines));
  const Ran r = amaxcheck({"replay", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find(path + ":4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("field 'start_us': number 21e308 overflows a double"), std::string::npos) << r.err;
}

TEST(HostileTrace, a_replay_that_diverges_names_the_trace_line_of_the_step) {
  std::vector<std::string> lines = read_lines(hazard_trace());
  ASSERT_GT(lines.size(), 6u);
  // Line 6 holds step 4: give it another op name, as if the trace came from another program.
  const std::size_t at = lines[5].find("\"op_name\":\"");
  ASSERT_NE(at, std::string::npos) << lines[5];
  lines[5].insert(at + 11, "renamed_");
  const std::string path = write_file("diverged.jsonl", join_lines(lines));
  const Ran r = amaxcheck({"replay", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find(path + ":6: diverged at step 4: expected"), std::string::npos) << r.err;
}

TEST(HostileTrace, shrink_and_export_refuse_a_trace_that_replay_refuses) {
  // Once shrink took only the choices (and said "same bug" of a run the trace does not show),
  // and export drew a trace whose scenario did not match its hash.
  std::vector<std::string> lines = read_lines(hazard_trace());
  std::vector<std::string> diverged = lines;
  const std::size_t at = diverged[5].find("\"op_name\":\"");
  ASSERT_NE(at, std::string::npos) << diverged[5];
  diverged[5].insert(at + 11, "renamed_");
  const std::string path = write_file("diverged_shrink.jsonl", join_lines(diverged));
  const Ran shrunk = amaxcheck({"shrink", path, "-o", temp_path("diverged_shrunk.jsonl")});
  EXPECT_EQ(shrunk.code, exit_bad_input) << shrunk.out << shrunk.err;
  EXPECT_NE(shrunk.err.find(path + ":6: diverged at step 4"), std::string::npos) << shrunk.err;
  std::vector<std::string> rehashed = lines;
  const std::string hash_field = "\"scenario_hash\":\"fnv1a64:";
  const std::size_t hash = rehashed[0].find(hash_field);
  ASSERT_NE(hash, std::string::npos) << rehashed[0].substr(0, 300);
  rehashed[0].replace(hash + hash_field.size(), 16, "0000000000000000");
  const std::string bad_hash = write_file("bad_hash_export.jsonl", join_lines(rehashed));
  const std::string timeline = temp_path("bad_hash_timeline.json");
  std::filesystem::remove(timeline);
  const Ran exported = amaxcheck({"export", bad_hash, "--perfetto", timeline});
  EXPECT_EQ(exported.code, exit_bad_input) << exported.out << exported.err;
  EXPECT_NE(exported.err.find("field 'scenario_hash'"), std::string::npos) << exported.err;
  EXPECT_FALSE(std::filesystem::exists(timeline));
  // A trace may embed no scenario (traces/FORMAT.md): it still exports.
  std::vector<std::string> bare = lines;
  auto header = nlohmann::json::parse(bare[0]);
  header["scenario"] = nullptr;
  bare[0] = header.dump();
  const Ran no_scenario = amaxcheck({"export", write_file("no_scenario.jsonl", join_lines(bare)), "--perfetto", timeline});
  EXPECT_EQ(no_scenario.code, exit_clean) << no_scenario.err;
}

TEST(HostileTrace, a_deeply_nested_line_is_bad_input) {
  std::vector<std::string> lines = read_lines(hazard_trace());
  lines[2] = "{\"type\": \"step\", \"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  const std::string path = write_file("deep.jsonl", join_lines(lines));
  const Ran r = amaxcheck({"replay", path});
  EXPECT_EQ(r.code, exit_bad_input) << r.err.substr(0, 300);
  EXPECT_NE(r.err.find(path + ":3: field 'x[0]"), std::string::npos) << r.err.substr(0, 300);
}

}  // namespace
}  // namespace amaxcheck::cli
