// Trace files: deterministic, round-trip, validated on read, and replayed step by step.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "util/atomic_file.h"
#include "trace/reproduce.h"
#include "io/scenario_hash.h"
#include "trace/trace.h"
#include "scenarios.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

namespace fs = std::filesystem;

ExploreOptions random_runs(std::uint64_t seed) {
  ExploreOptions options;
  options.strategy = "random";
  options.seed = seed;
  options.runs = 100;
  return options;
}

/// The trace of the first failing random run of `scenario`.
Trace failing_trace(const Scenario& scenario, std::uint64_t seed = 4) {
  const ExploreOptions options = random_runs(seed);
  const ExploreResult result = explore(scenario, options);
  EXPECT_TRUE(result.first_failure.has_value());
  return failure_trace(scenario, options, *result.first_failure);
}

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("amaxcheck-sched-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(Trace, the_same_scenario_and_seed_give_byte_identical_traces) {
  const Scenario s = testing::wait_after_copy(3);
  const std::string a = trace_to_jsonl(failing_trace(s, 21));
  const std::string b = trace_to_jsonl(failing_trace(s, 21));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, trace_to_jsonl(failing_trace(s, 22))) << "the seed is part of the trace";
  for (const char* kind : {"random", "pct", "timed"}) {
    ExploreOptions options = random_runs(5);
    options.strategy = kind;
    EXPECT_EQ(check_determinism(s, options, 3), std::nullopt) << kind;
  }
}

/// A detector that reports, at the end of every run, one hazard naming how many detectors of its
/// kind were built before it: the two explorations check_determinism runs build one each, so
/// their traces differ, on the hazard's line only.
class NumberedDetector final : public Detector {
 public:
  explicit NumberedDetector(int number) : number_(number) {}
  static std::unique_ptr<Detector> make(const Scenario&) { return std::make_unique<NumberedDetector>(++built); }

  const char* name() const override { return "numbered"; }
  Events events() const override { return Events{false, false, false}; }
  void on_finish(const Engine&) override {
    Hazard& hazard = hazards_.emplace_back();
    hazard.kind = HazardKind::value_mismatch;
    hazard.summary = "detector #" + std::to_string(number_);
  }
  const std::vector<Hazard>& hazards() const override { return hazards_; }
  void reset() override { hazards_.clear(); }

 private:
  static inline int built = 0;
  int number_;
  std::vector<Hazard> hazards_;
};

TEST(Trace, the_determinism_check_reports_the_first_run_whose_two_traces_differ) {
  const Scenario s = testing::wait_after_copy(2, false);
  ExploreOptions options = random_runs(5);
  static constexpr DetectorFactory numbered[] = {&NumberedDetector::make};
  options.run.detectors = numbered;
  const std::optional<std::string> found = check_determinism(s, options, 3);
  ASSERT_TRUE(found.has_value()) << "two runs whose hazards differ were called deterministic";
  // The header, a line per step (every finished run takes expected_steps), then the hazard.
  const std::string line = std::to_string(expected_steps(s) + 2);
  EXPECT_EQ(found->rfind("run 0 is not deterministic: its two traces first differ on line " + line + " (byte", 0), 0u)
      << *found;
}

TEST(Trace, round_trips_through_its_text) {
  const Trace trace = failing_trace(testing::wait_after_copy(2));
  const std::string text = trace_to_jsonl(trace);
  const Trace back = parse_trace(text, "mem.jsonl");
  EXPECT_EQ(trace_to_jsonl(back), text);
  EXPECT_EQ(back.steps.size(), trace.steps.size());
  EXPECT_EQ(back.choices(), trace.choices());
  EXPECT_FALSE(back.hazards.empty());
}

TEST(Trace, header_records_format_version_seed_and_derived_parameters) {
  ExploreOptions options = random_runs(8);
  options.strategy = "pct";
  const Scenario s = testing::wait_after_copy(2);
  const ExploreResult r = explore(s, options);
  ASSERT_TRUE(r.first_failure);
  const Trace t = failure_trace(s, options, *r.first_failure);
  const auto header = nlohmann::json::parse(lines_of(trace_to_jsonl(t)).front());
  EXPECT_EQ(header["format"], "amaxcheck-trace");
  EXPECT_EQ(header["format_version"], 1);
  EXPECT_EQ(header["strategy"], "pct");
  EXPECT_EQ(header["seed"], run_seed(8, r.first_failure->index));
  EXPECT_EQ(header["run_index"], r.first_failure->index);
  EXPECT_EQ(header["parameters"]["depth"], 3);
  EXPECT_EQ(header["parameters"]["change_points"].size(), 2u);
  EXPECT_EQ(header["parameters"]["exploration_seed"], 8);
  EXPECT_EQ(header["scenario_hash"], scenario_hash(s));
  EXPECT_TRUE(header["scenario"].is_object()) << "the scenario is embedded";
}

// A trace names the run of its exploration that it recorded (the seed's run index), as a report
// of a later run than the first needs: the run is found again from the exploration's seed.
TEST(Trace, header_names_the_run_of_the_exploration_it_recorded) {
  const Scenario s = testing::wait_after_copy(2);
  const ExploreOptions options = random_runs(4);
  const ExploreResult r = explore(s, options);
  ASSERT_TRUE(r.first_failure);
  const FailingRun& failure = *r.first_failure;
  const Trace t = make_trace(s, failure.run, TraceOrigin{failure.strategy, failure.seed, 7, failure.parameters});
  const auto header = nlohmann::json::parse(lines_of(trace_to_jsonl(t)).front());
  EXPECT_EQ(header["run_index"], 7);
  EXPECT_EQ(parse_trace(trace_to_jsonl(t), "mem.jsonl").header.run_index, 7u) << "and the reader reads it back";
}

TEST(Trace, is_written_atomically_and_read_back) {
  const Trace trace = failing_trace(testing::wait_after_copy(2));
  const std::string path = temp_path("atomic.jsonl");
  write_trace_file(path, trace);
  EXPECT_EQ(read_file(path), trace_to_jsonl(trace));
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path())) {
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos) << "no temporary file is left behind";
  }
  EXPECT_EQ(trace_to_jsonl(read_trace_file(path)), trace_to_jsonl(trace));
  fs::remove(path);
}

TEST(Replay, a_replayed_trace_reproduces_the_hazard) {
  const Trace trace = failing_trace(testing::wait_after_copy(2));
  const std::string path = temp_path("replay.jsonl");
  write_trace_file(path, trace);
  const Trace read = read_trace_file(path);
  const Scenario scenario = trace_scenario(read, path);
  const RunResult run = replay_trace(scenario, read, path);
  EXPECT_TRUE(run.has_hazard(HazardKind::data_race));
  EXPECT_EQ(run.step_count, trace.steps.size());
  EXPECT_EQ(trace_to_jsonl(make_trace(scenario, run, TraceOrigin{read.header.strategy, read.header.seed,
                                                                  read.header.run_index, read.header.parameters})),
            read_file(path))
      << "the replayed run writes the same trace";
  fs::remove(path);
}

/// Replays `text` and returns the InputError's message (empty when it replayed cleanly).
std::string replay_error(const std::string& text) {
  try {
    const Trace trace = parse_trace(text, "edited.jsonl");
    replay_trace(trace_scenario(trace, "edited.jsonl"), trace, "edited.jsonl");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Replay, a_trace_edited_to_pick_another_action_diverges_at_that_step) {
  const Trace trace = failing_trace(testing::wait_after_copy(2));
  std::vector<std::string> lines = lines_of(trace_to_jsonl(trace));
  // Find a step with a real choice and make it choose another option.
  std::size_t edited = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto j = nlohmann::ordered_json::parse(lines[i]);
    if (j["type"] != "step" || j["option_count"].get<int>() < 2) continue;
    j["chosen"] = (j["chosen"].get<int>() + 1) % j["option_count"].get<int>();
    lines[i] = j.dump();
    edited = j["step"].get<std::size_t>();
    break;
  }
  const std::string error = replay_error(join_lines(lines));
  EXPECT_NE(error.find("diverged at step " + std::to_string(edited) + ": expected "), std::string::npos) << error;
  EXPECT_NE(error.find(", got "), std::string::npos) << error;
}

TEST(Replay, a_trace_edited_to_name_another_op_diverges) {
  const Trace trace = failing_trace(testing::wait_after_copy(2));
  std::vector<std::string> lines = lines_of(trace_to_jsonl(trace));
  auto j = nlohmann::ordered_json::parse(lines[3]);
  j["op_name"] = "something_else";
  lines[3] = j.dump();
  const std::string error = replay_error(join_lines(lines));
  EXPECT_NE(error.find("diverged at step 2: expected"), std::string::npos) << error;
  EXPECT_NE(error.find("something_else"), std::string::npos) << error;
}

TEST(Replay, a_trace_with_a_wrong_option_count_diverges) {
  const Trace trace = failing_trace(testing::wait_after_copy(2));
  std::vector<std::string> lines = lines_of(trace_to_jsonl(trace));
  auto j = nlohmann::ordered_json::parse(lines[1]);
  j["option_count"] = j["option_count"].get<int>() + 1;
  lines[1] = j.dump();
  const std::string error = replay_error(join_lines(lines));
  EXPECT_NE(error.find("diverged at step 0: expected a next_action choice among"), std::string::npos) << error;
}

TEST(Replay, a_trace_edited_to_end_otherwise_diverges_at_its_summary) {
  // Every choice and step replays as recorded, but the recorded run is said to have hung: a
  // replay that calls that reproduced would confirm a hang that never happens.
  const Trace trace = failing_trace(testing::wait_after_copy(2));
  ASSERT_EQ(trace.summary.outcome, RunOutcome::finished);
  std::vector<std::string> lines = lines_of(trace_to_jsonl(trace));
  auto j = nlohmann::ordered_json::parse(lines.back());
  ASSERT_EQ(j["type"], "summary");
  j["outcome"] = "stuck";
  lines.back() = j.dump();
  const std::string error = replay_error(join_lines(lines));
  EXPECT_EQ(error, fmt::format("edited.jsonl:{}: diverged at step {}: expected the run to end stuck, got finished",
                               lines.size(), trace.steps.size()));
}

TEST(Replay, a_trace_with_a_step_past_the_end_of_the_run_diverges_there) {
  // One more step recorded than the run takes: the run finishes, as the summary says, with a
  // recorded choice it never made.
  const Trace trace = failing_trace(testing::wait_after_copy(2));
  std::vector<std::string> lines = lines_of(trace_to_jsonl(trace));
  const std::size_t steps = trace.steps.size(), last_step = steps;  // lines[0] is the header
  auto extra = nlohmann::ordered_json::parse(lines[last_step]);
  ASSERT_EQ(extra["type"], "step");
  extra["step"] = steps;
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(last_step + 1), extra.dump());
  auto summary = nlohmann::ordered_json::parse(lines.back());
  summary["steps"] = steps + 1;
  lines.back() = summary.dump();
  const std::string error = replay_error(join_lines(lines));
  EXPECT_EQ(error.rfind(fmt::format("edited.jsonl:{}: diverged at step {}: expected a next_action choice among", last_step + 2, steps), 0), 0u)
      << error;
  EXPECT_NE(error.find("got the end of the run"), std::string::npos) << error;
}

TEST(Replay, refuses_a_scenario_that_does_not_match_the_hash) {
  const Trace trace = failing_trace(testing::wait_after_copy(2));
  EXPECT_THROW(replay_trace(testing::wait_after_copy(3), trace, "t.jsonl"), InputError);
  // Renamed only, the scenario runs the recorded schedule step for step: only the hash tells
  // that it is not the scenario the trace ran.
  Scenario renamed = testing::wait_after_copy(2);
  renamed.name += "_renamed";
  try {
    replay_trace(renamed, trace, "t.jsonl");
    ADD_FAILURE() << "a trace replayed against another scenario";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), fmt::format("t.jsonl: the trace ran scenario {} but the scenario given hashes to {}",
                                                 trace.header.scenario_hash, scenario_hash(renamed)));
  }
}

std::string read_error(const std::string& text) {
  try {
    parse_trace(text, "bad.jsonl");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TraceReader, names_the_file_line_and_field_of_a_bad_value) {
  std::vector<std::string> lines = lines_of(trace_to_jsonl(failing_trace(testing::wait_after_copy(2))));
  auto j = nlohmann::ordered_json::parse(lines[2]);
  j["rank"] = "zero";
  lines[2] = j.dump();
  EXPECT_EQ(read_error(join_lines(lines)), "bad.jsonl:3: field 'rank': expected an unsigned integer, got \"zero\"");
}

TEST(TraceReader, names_a_missing_field) {
  std::vector<std::string> lines = lines_of(trace_to_jsonl(failing_trace(testing::wait_after_copy(2))));
  auto j = nlohmann::ordered_json::parse(lines[2]);
  j["op"].erase("thread");
  lines[2] = j.dump();
  EXPECT_EQ(read_error(join_lines(lines)), "bad.jsonl:3: field 'op.thread': expected a value, but it is missing");
}

TEST(TraceReader, rejects_other_format_versions_truncation_and_garbage) {
  std::vector<std::string> lines = lines_of(trace_to_jsonl(failing_trace(testing::wait_after_copy(2))));
  auto header = nlohmann::ordered_json::parse(lines[0]);
  header["format_version"] = 2;
  std::vector<std::string> v2 = lines;
  v2[0] = header.dump();
  EXPECT_NE(read_error(join_lines(v2)).find("bad.jsonl:1: field 'format_version': expected 1"), std::string::npos);
  std::vector<std::string> truncated(lines.begin(), lines.end() - 1);
  EXPECT_NE(read_error(join_lines(truncated)).find("without a summary line"), std::string::npos);
  std::vector<std::string> garbage = lines;
  garbage[4] = "{not json";
  EXPECT_NE(read_error(join_lines(garbage)).find("bad.jsonl:5:3: invalid JSON"), std::string::npos);
  EXPECT_NE(read_error("").find("empty trace"), std::string::npos);
}


/// One malformed trace: `spoil` edits a good trace's lines (parsed; [0] the header, then the
/// steps, the hazards and the summary last), and the reader must name `where` ("bad.jsonl:LINE:
/// field 'F': expected ...") and say what it expected.
struct BadTrace {
  std::string name;
  std::function<void(std::vector<nlohmann::ordered_json>&)> spoil;
  std::string message;
};
void PrintTo(const BadTrace& bad, std::ostream* os) { *os << bad.name; }

using Lines = std::vector<nlohmann::ordered_json>;
nlohmann::ordered_json& first_hazard(Lines& l) {
  for (auto& line : l) {
    if (line["type"] == "hazard") return line;
  }
  throw std::logic_error("the trace has no hazard line");
}

std::vector<BadTrace> bad_traces() {
  return {
      {"step_out_of_order", [](Lines& l) { l[2]["step"] = 5; },
       "bad.jsonl:3: field 'step': expected 1 (steps are numbered in order), got 5"},
      {"step_line_left_out", [](Lines& l) { l.erase(l.begin() + 2); },
       "bad.jsonl:3: field 'step': expected 1 (steps are numbered in order), got 2"},
      {"unknown_step_kind", [](Lines& l) { l[1]["kind"] = "launch"; },
       "bad.jsonl:2: field 'kind': expected one of issue, execute, join, complete, got \"launch\""},
      {"no_options", [](Lines& l) { l[1]["option_count"] = 0; }, "bad.jsonl:2: field 'option_count': expected at least 1"},
      {"chosen_past_the_options", [](Lines& l) { l[1]["chosen"] = l[1]["option_count"]; },
       "bad.jsonl:2: field 'chosen': expected an index below option_count"},
      {"rank_beyond_32_bits", [](Lines& l) { l[1]["rank"] = std::uint64_t{1} << 33; },
       "bad.jsonl:2: field 'rank': expected a 32-bit unsigned integer"},
      {"value_beyond_float_range", [](Lines& l) {
         for (auto& line : l) {
           if (line.contains("written")) {
             line["written"][0]["values"][0] = 1e39;
             return;
           }
         }
       }, "field 'written[0].values[0]': expected a number within float range"},
      {"unknown_hazard_kind", [](Lines& l) { first_hazard(l)["kind"] = "bogus"; },
       "field 'kind': expected a hazard kind (data_race, deadlock, ...), got \"bogus\""},
      {"unknown_outcome", [](Lines& l) { l.back()["outcome"] = "exploded"; },
       "field 'outcome': expected finished, stuck, stopped or step_limit, got \"exploded\""},
      {"header_not_first", [](Lines& l) { std::swap(l[0], l[1]); },
       "bad.jsonl:1: field 'type': expected \"header\" on the first line, got \"step\""},
      {"summary_counts_another_step", [](Lines& l) { l.back()["steps"] = l.back()["steps"].get<int>() + 1; },
       "(the number of step lines)"},
      {"summary_counts_another_hazard", [](Lines& l) { l.back()["hazards"] = l.back()["hazards"].get<int>() + 1; },
       "(the number of hazard lines)"},
      {"unknown_line_type", [](Lines& l) { l.insert(l.begin() + 1, nlohmann::ordered_json{{"type", "comment"}}); },
       "bad.jsonl:2: field 'type': expected one of header, step, hazard, summary, got \"comment\""},
      {"step_after_a_hazard", [](Lines& l) { l.insert(l.end() - 1, l[1]); }, "a step line after the hazard lines"},
      {"line_after_the_summary", [](Lines& l) { l.push_back(l.back()); }, "nothing may follow the summary line"},
  };
}

class BadTraceLines : public ::testing::TestWithParam<BadTrace> {};

TEST_P(BadTraceLines, is_an_input_error_naming_the_line_field_and_what_was_expected) {
  static const std::vector<std::string> good = lines_of(trace_to_jsonl(failing_trace(testing::wait_after_copy(2))));
  Lines lines;
  for (const std::string& text : good) lines.push_back(nlohmann::ordered_json::parse(text));
  GetParam().spoil(lines);
  std::vector<std::string> texts;
  for (const auto& line : lines) texts.push_back(line.dump());
  const std::string error = read_error(join_lines(texts));
  ASSERT_FALSE(error.empty()) << "accepted a malformed trace";
  EXPECT_NE(error.find(GetParam().message), std::string::npos) << error;
  EXPECT_EQ(error.rfind("bad.jsonl:", 0), 0u) << "names the file first: " << error;
}

INSTANTIATE_TEST_SUITE_P(Kinds, BadTraceLines, ::testing::ValuesIn(bad_traces()),
                         [](const ::testing::TestParamInfo<BadTrace>& info) { return info.param.name; });

}  // namespace
}  // namespace amaxcheck::sched
