// Knobs: parsing, errors that name the knob, the command line that rebuilds a scenario, and
// the CLI options.
#include <gtest/gtest.h>

#include <algorithm>

#include <CLI/CLI.hpp>

#include "cli/knob_options.h"
#include "io/scenario_json.h"
#include "protocols/protocol.h"
#include "protocols/variant_docs.h"
#include "run_protocol.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

std::string error_of(const std::string& name, const std::string& value) {
  ProtocolKnobs knobs;
  try {
    set_knob(knobs, name, value);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Knobs, every_documented_knob_has_a_default_that_parses_back) {
  for (const KnobDoc& doc : knob_docs()) {
    if (doc.repeatable) continue;
    ProtocolKnobs knobs;
    EXPECT_EQ(try_set_knob(knobs, doc.name, doc.flag ? "off" : doc.default_value), std::nullopt) << doc.name;
    EXPECT_TRUE(knob_args(knobs).empty()) << doc.name << " default changed the knobs";
  }
}

TEST(Knobs, bad_values_name_the_knob_and_what_was_expected) {
  EXPECT_EQ(error_of("comm", "both"), "--comm: expected shared|separate, got \"both\"");
  EXPECT_EQ(error_of("dp", "0"), "--dp: expected an integer in [1, 65536], got \"0\"");
  EXPECT_EQ(error_of("dp", "eight"), "--dp: expected an integer in [1, 65536], got \"eight\"");
  EXPECT_EQ(error_of("margin", "-65"), "--margin: expected an integer in [-64, 64], got \"-65\"");
  EXPECT_NE(error_of("skip", "3"), "");
  EXPECT_NE(error_of("input", "0:0:0:sideways=1").find("expected RANK:ITER:MODULE:fwd|bwd"), std::string::npos);
  EXPECT_NE(error_of("order", "tp-tp-dp-pp").find("permutation"), std::string::npos);
  EXPECT_NE(error_of("group", "0-").find("rank lists"), std::string::npos);
  EXPECT_NE(error_of("colour", "red").find("unknown knob \"colour\""), std::string::npos);
}

TEST(Knobs, a_number_is_refused_whole_not_read_as_its_leading_digits_or_wrapped_to_32_bits) {
  // "2x" is no DP 2, and 2^32 + 2 is no DP 2 either: a check of either would be of another design.
  EXPECT_EQ(error_of("dp", "2x"), "--dp: expected an integer in [1, 65536], got \"2x\"");
  EXPECT_EQ(error_of("dp", "4294967298"), "--dp: expected an integer in [1, 65536], got \"4294967298\"");
  EXPECT_EQ(error_of("dp", "65537"), "--dp: expected an integer in [1, 65536], got \"65537\"");
  EXPECT_NE(error_of("skip", "1:0x"), "");
  EXPECT_NE(error_of("stage-modules", "2,0").find("--stage-modules"), std::string::npos) << "a stage without a module";
  // A hand-set value is a number, all of it.
  for (const char* bad : {"0:0:0:fwd=abc", "0:0:0:fwd=1O", "0:0:0:fwd=1,2,3,4x"}) {
    EXPECT_NE(error_of("input", bad).find("--input"), std::string::npos) << bad;
  }
}

TEST(Knobs, an_input_rule_for_one_tensor_sets_that_tensor_and_writes_it_back) {
  ProtocolKnobs one = testing::knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"iters", "1"}});
  ProtocolKnobs every = one;
  set_knob(one, "input", "0:0:0:fwd:1=7");
  set_knob(every, "input", "0:0:0:fwd=7");
  ASSERT_EQ(one.inputs.size(), 1u);
  EXPECT_EQ(one.inputs[0].tensor, 1u);
  EXPECT_NE(command_line(one).find("--input 0:0:0:fwd:1=7"), std::string::npos) << command_line(one);
  // Only the weight (forward tensor 1) is 7: another design than every forward tensor at 7.
  EXPECT_NE(scenario_to_json(build_protocol(one)), scenario_to_json(build_protocol(every)));
  EXPECT_NE(error_of("input", "0:0:0:fwd:x=7"), "");
}

TEST(Knobs, each_direction_s_tensor_count_is_its_own) {
  ProtocolKnobs knobs;
  set_knob(knobs, "bwd-tensors", "3");
  EXPECT_EQ(knobs.bwd_tensors, 3u);
  EXPECT_EQ(knobs.fwd_tensors, ProtocolKnobs{}.fwd_tensors);
  set_knob(knobs, "fwd-tensors", "1");
  EXPECT_EQ(knobs.fwd_tensors, 1u);
  EXPECT_EQ(knobs.bwd_tensors, 3u);
}

TEST(Knobs, cross_checks_reject_out_of_range_rules_and_bad_groups) {
  const auto rejects = [](std::vector<std::pair<std::string, std::string>> settings, const std::string& text) {
    const auto knobs = testing::knobs_of(ProtocolName::te_sync, settings);
    try {
      validate_knobs(knobs);
      ADD_FAILURE() << "accepted: " << command_line(knobs);
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  rejects({{"skip", "2:0"}}, "--skip: rank 2 out of range");
  rejects({{"eval", "5"}}, "--eval: module 5 out of range");
  rejects({{"input", "0:2:0:fwd=1"}}, "--input: iteration 2 out of range");
  rejects({{"input", "0:0:0:fwd=1,2"}}, "expected 1 or 4 (--elems) values");
  rejects({{"dp", "4"}, {"group", "0,1/1,2,3"}}, "rank 1 is in rank lists 0 and 1");
  rejects({{"dp", "4"}, {"group", "0,1"}}, "rank 2 is in no rank list");
  rejects({{"dp", "65536"}, {"tp", "2"}}, "world size dp*tp*pp*cp = 131072 exceeds 65536");
  rejects({{"tp", "2"}, {"comm", "shared"}}, "--comm: shared needs");
}

TEST(Knobs, the_source_command_line_rebuilds_the_same_scenario) {
  const auto knobs = testing::knobs_of(
      ProtocolName::te_async, {{"comm", "shared"}, {"dp", "4"}, {"skip", "1:0:1"}, {"input", "0:1:1:bwd:0=inf,1,2,3"},
                               {"recompute", "on"}, {"group", "0-3"}, {"order", "dp-tp-cp-pp"}, {"tp", "1"}});
  const Scenario scenario = build_protocol(knobs);
  ASSERT_EQ(scenario.source.rfind("amaxcheck check te-async ", 0), 0u) << scenario.source;

  // Parse the command line back with the CLI options, as `amaxcheck check` does.
  CLI::App app;
  ProtocolKnobs parsed;
  std::string protocol;
  app.add_option("protocol", protocol);
  cli::add_knob_options(app, parsed);
  app.parse(scenario.source.substr(std::string("amaxcheck check ").size()), false);
  parsed.protocol = *parse_protocol(protocol);
  EXPECT_EQ(command_line(parsed), scenario.source);
  EXPECT_EQ(scenario_to_json(build_protocol(parsed)), scenario_to_json(scenario));
}

TEST(Knobs, cli_options_reject_a_bad_value_with_the_option_name) {
  CLI::App app;
  ProtocolKnobs knobs;
  cli::add_knob_options(app, knobs);
  try {
    app.parse("--wait sometime", false);
    FAIL() << "accepted --wait sometime";
  } catch (const CLI::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("expected before-copy|after-copy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--wait"), std::string::npos) << e.what();
  }
}

TEST(Knobs, repeatable_options_accumulate_one_value_per_occurrence) {
  CLI::App app;
  ProtocolKnobs knobs;
  std::vector<std::string> rest;
  cli::add_knob_options(app, knobs);
  app.add_option("rest", rest);
  app.parse("--skip 1:0 --skip 2:1:0 positional", false);
  ASSERT_EQ(knobs.skips.size(), 2u);
  EXPECT_EQ(knobs.skips[1].rank, 2u);
  EXPECT_EQ(knobs.skips[1].iter, 0u);
  EXPECT_EQ(rest, (std::vector<std::string>{"positional"}));
}

}  // namespace
}  // namespace amaxcheck

namespace amaxcheck {
namespace {

TEST(Knobs, a_choice_knob_lists_its_choices_and_each_parses) {
  std::size_t choice_knobs = 0;
  for (const KnobDoc& doc : knob_docs()) {
    if (doc.choices.empty()) continue;
    ++choice_knobs;
    std::string joined;
    for (const std::string& choice : doc.choices) {
      joined += (joined.empty() ? "" : "|") + choice;
      ProtocolKnobs knobs;
      EXPECT_EQ(try_set_knob(knobs, doc.name, choice), std::nullopt) << doc.name << " " << choice;
    }
    EXPECT_EQ(joined, doc.values) << doc.name;
    EXPECT_NE(std::find(doc.choices.begin(), doc.choices.end(), doc.default_value), doc.choices.end()) << doc.name;
  }
  EXPECT_GE(choice_knobs, 9u);  // comm, wait, wait-bwd, amax-order, pp-schedule, algo, kernels, grad-op, ...
}

TEST(Knobs, every_framework_variant_names_a_choice_of_a_knob_with_its_default_first) {
  const auto docs = knob_docs();
  std::string previous_knob;
  for (const VariantDoc& variant : variant_docs()) {
    const auto knob = std::find_if(docs.begin(), docs.end(), [&](const KnobDoc& d) { return d.name == variant.knob; });
    ASSERT_NE(knob, docs.end()) << variant.knob;
    EXPECT_NE(std::find(knob->choices.begin(), knob->choices.end(), variant.value), knob->choices.end())
        << variant.knob << " " << variant.value;
    if (variant.knob != previous_knob) {
      EXPECT_EQ(variant.value, knob->default_value) << variant.knob;
    }
    previous_knob = variant.knob;
    EXPECT_FALSE(variant.shipped.empty()) << variant.knob << " " << variant.value;
  }
}

}  // namespace
}  // namespace amaxcheck
