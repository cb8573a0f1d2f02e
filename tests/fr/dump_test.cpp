// Validating a dump (fr/dump.h): the records kept, the bounds, and the messages of a bad one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "fr/dump.h"
#include "fr/readers.h"
#include "util/check.h"

namespace amaxcheck::fr {
namespace {

using ::testing::HasSubstr;

std::string entry(const std::string& extra = "") {
  return R"({"record_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": 1,
             "profiling_name": "nccl:all_reduce", "input_sizes": [[8]], "output_sizes": [[8]],
             "input_dtypes": ["Float"], "output_dtypes": ["Float"], "state": "completed",
             "time_created_ns": 5, "is_p2p": false)" + extra + "}";
}

Dump dump_of(const std::string& entries, const std::string& top = "") {
  const auto doc = read_json(R"({"version": "2.4", )" + top + R"("entries": [)" + entries + "]}");
  return validate_dump(*doc, "/tmp/nccl_trace_rank_3", 0);
}

std::string error_of(const std::string& entries, const std::string& top = "") {
  try {
    dump_of(entries, top);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ValidateDump, a_well_formed_entry_becomes_a_record_with_shared_tables) {
  const Dump d = dump_of(entry() + "," + entry(R"(, "record_id": 1, "collective_seq_id": 2, "mystery": 1)"));
  EXPECT_EQ(d.rank, 3);  // from the file name
  EXPECT_EQ(d.version, "2.4");
  ASSERT_EQ(d.records.size(), 2u);
  const Record& r = d.records[1];
  EXPECT_EQ(r.collective_seq_id, 2);
  EXPECT_EQ(d.texts[r.pg_name], "0");
  EXPECT_EQ(d.texts[r.profiling_name], "nccl:all_reduce");
  EXPECT_EQ(d.shapes[r.input_sizes], (std::vector<Shape>{{8}}));
  EXPECT_EQ(r.input_sizes, d.records[0].input_sizes);  // equal shapes are stored once
  EXPECT_EQ(r.state, State::completed);
  EXPECT_EQ(d.ignored_fields, std::vector<std::string>{"mystery"});
}

TEST(ValidateDump, bad_fields_are_named_with_the_entry) {
  EXPECT_EQ(error_of(R"({"process_group": ["0"]})"), "/tmp/nccl_trace_rank_3: entries[0]: missing field 'state'");
  EXPECT_THAT(error_of(entry(R"(, "collective_seq_id": 18446744073709551616)")),
              HasSubstr("entries[0].collective_seq_id: expected an integer in 0..2^63-1"));
  EXPECT_THAT(error_of(entry(R"(, "input_sizes": [[-1]])")),
              HasSubstr("entries[0].input_sizes: expected a list of shapes (lists of non-negative integers)"));
  EXPECT_THAT(error_of(entry(R"(, "state": "exploded")")), HasSubstr("entries[0].state: expected one of"));
  EXPECT_THAT(error_of(entry(R"(, "is_p2p": 1)")), HasSubstr("entries[0].is_p2p: expected a boolean, got int 1"));
  EXPECT_THAT(error_of(entry() + "," + entry()), HasSubstr("entries: a record_id appears twice"));
  // Counts are never negative: a sequence number or record id below zero is refused, not read.
  EXPECT_THAT(error_of(entry(R"(, "collective_seq_id": -1)")),
              HasSubstr("entries[0].collective_seq_id: expected an integer in 0..2^63-1, got -1"));
  EXPECT_THAT(error_of(entry(R"(, "record_id": -3)")), HasSubstr("entries[0].record_id: expected an integer in 0..2^63-1, got -3"));
}

// A dump that says which rank it is must name a rank the import can hold; a wrong one is bad
// input, never read as some rank (nor replaced by the file name's number).
TEST(ValidateDump, a_rank_outside_the_limit_is_refused_with_the_field) {
  EXPECT_EQ(dump_of(entry(), R"("rank": 5, )").rank, 5);
  EXPECT_THAT(error_of(entry(), R"("rank": -1, )"), HasSubstr("/tmp/nccl_trace_rank_3.rank: expected a rank from 0 to"));
  EXPECT_THAT(error_of(entry(), R"("rank": )" + std::to_string(max_rank) + ", "),
              HasSubstr("/tmp/nccl_trace_rank_3.rank: expected a rank from 0 to " + std::to_string(max_rank - 1)));
}

TEST(ValidateDump, the_version_must_be_2_x) {
  EXPECT_EQ(dump_of("", "").version, "2.4");
  EXPECT_NO_THROW(validate_dump(*read_json(R"({"version": 2, "entries": []})"), "f", 0));
  try {
    validate_dump(*read_json(R"({"version": "3.1", "entries": []})"), "f", 0);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "f: Flight Recorder dump version 3.1 is not supported (expected 2.x)");
  }
}

TEST(ValidateDump, at_most_64_frames_are_kept_and_the_rest_counted) {
  std::string frames;
  for (int i = 0; i < 100; ++i) frames += (i ? "," : "") + std::string(R"({"name": "f", "filename": "x.py", "line": )") + std::to_string(i) + "}";
  const Dump d = dump_of(entry(R"(, "frames": [)" + frames + "]"));
  EXPECT_EQ(d.stacks[d.records[0].stack].size(), max_frames);
  EXPECT_EQ(d.records[0].frames_dropped, 36u);
}

TEST(ValidateDump, gloos_single_unnamed_group_is_keyed_by_its_name) {
  const Dump d = dump_of(entry(), R"("pg_config": {"": {"name": "1", "desc": "amax", "ranks": "[0, 1]"}}, )");
  ASSERT_EQ(d.pg_config.size(), 1u);
  EXPECT_EQ(d.pg_config[0].key, "1");
  EXPECT_EQ(d.pg_config[0].ranks, (std::vector<std::int64_t>{0, 1}));
}

TEST(ValidateDump, ranks_nested_too_deeply_are_refused_with_the_field) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THAT(error_of(entry(), R"("pg_config": {"0": {"name": "0", "ranks": ")" + deep + R"("}}, )"),
              HasSubstr("pg_config['0'].ranks: expected a rank list like \"[0, 1]\", got a list nested too deeply"));
  EXPECT_THAT(error_of(entry(), R"("pg_config": {"0": {"ranks": "[0, 0]"}}, )"), HasSubstr("a rank appears twice"));
}

TEST(BoundedText, long_text_is_cut_with_its_length_and_a_digest_that_tells_apart) {
  const std::string a = bounded_text(std::string(300, 'x') + "1", "w");
  const std::string b = bounded_text(std::string(300, 'x') + "2", "w");
  EXPECT_EQ(a.substr(0, 200), std::string(200, 'x'));
  EXPECT_THAT(a, HasSubstr("...(301 chars, "));
  EXPECT_NE(a, b);
  EXPECT_EQ(bounded_text("short", "w"), "short");
  // 250 two-byte characters: cut by characters, not bytes
  std::string wide;
  for (int i = 0; i < 250; ++i) wide += "\xc3\xa9";
  EXPECT_THAT(bounded_text(wide, "w"), HasSubstr("(250 chars, "));
}

TEST(BoundedText, a_lone_surrogate_is_refused_naming_the_field) {
  try {
    bounded_text("ok\xed\xb3\xbf", "f: entries[1].profiling_name");  // U+DCFF as Python's surrogatepass writes it
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("f: entries[1].profiling_name: not valid Unicode"));
  }
}

TEST(RankFromName, is_the_trailing_number_before_an_extension) {
  EXPECT_EQ(rank_from_name("/tmp/nccl_trace_rank_12"), 12);
  EXPECT_EQ(rank_from_name("dumps/rank7.json"), 7);
  EXPECT_EQ(rank_from_name("dump"), std::nullopt);
  EXPECT_EQ(rank_from_name("x_99999999999999999999"), std::nullopt);
}

}  // namespace
}  // namespace amaxcheck::fr
