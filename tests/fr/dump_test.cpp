// Validating a dump (fr/dump.h): the records kept, the bounds, and the messages of a bad one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "fr/dump.h"
#include "fr/readers.h"
#include "util/check.h"

namespace amaxcheck::fr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

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

/// A fresh folder for one test's dump files.
fs::path fresh_folder(const std::string& name) {
  const fs::path folder = fs::temp_directory_path() / ("amaxcheck_fr_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

/// Writes a one-entry JSON dump (`top` adds top-level fields) under `folder`; returns its path.
std::string write_dump(const fs::path& folder, const std::string& name, const std::string& top = "",
                       const std::string& before = "") {
  const fs::path path = folder / name;
  std::ofstream(path, std::ios::binary) << before << R"({"version": "2.4", )" << top << R"("entries": [)" << entry() << "]}";
  return path.string();
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

// The message shows the version's own value. Once the top-level dict's: the lookup of the
// version and the read of its node id were unordered arguments of one call.
TEST(ValidateDump, a_version_that_is_no_version_is_shown_as_itself) {
  try {
    validate_dump(*read_json(R"({"version": [1, 2, 3], "entries": []})"), "f", 0);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("got a list of 3"), std::string::npos) << e.what();
  }
}

// A version written as a float (2.4, not "2.4") is still a 2.x version.
TEST(ValidateDump, a_version_written_as_a_number_is_read_as_its_text) {
  EXPECT_EQ(validate_dump(*read_json(R"({"version": 2.4, "entries": []})"), "f", 0).version, "2.4");
}

// A major number too long for an int is an unsupported version (bad input), not a crash.
TEST(ValidateDump, a_version_with_a_huge_major_number_is_not_supported) {
  try {
    validate_dump(*read_json(R"({"version": "12345678901.0", "entries": []})"), "f", 0);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "f: Flight Recorder dump version 12345678901.0 is not supported (expected 2.x)");
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

TEST(ValidateDump, a_negative_rank_in_pg_config_is_refused_with_the_field) {
  EXPECT_THAT(error_of(entry(), R"("pg_config": {"0": {"name": "0", "ranks": "[-1, 0]"}}, )"),
              HasSubstr("pg_config['0'].ranks: expected a list of non-negative ranks, got a list of 2"));
}

// Python writes an absent value as None: the field reads as missing, not as a wrong value.
TEST(ValidateDump, a_field_written_as_none_is_absent) {
  const Dump d = dump_of(entry(), R"("rank": null, "pg_config": {"0": {"name": "0", "desc": null, "ranks": "[0, 3]"}}, )");
  EXPECT_EQ(d.rank, 3);  // from the file name
  ASSERT_EQ(d.pg_config.size(), 1u);
  EXPECT_EQ(d.pg_config[0].desc, "");
  EXPECT_TRUE(dump_of(entry(), R"("pg_config": null, )").pg_config.empty());
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

// A byte cut would split a character and show a replacement character in the report.
TEST(BoundedText, long_non_ascii_text_keeps_its_first_200_characters_whole) {
  std::string wide;
  for (int i = 0; i < 250; ++i) wide += "\xc3\xa9";
  EXPECT_EQ(bounded_text(wide, "w").substr(0, 2 * max_text + 4), wide.substr(0, 2 * max_text) + "...(");
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

// 7 digits at most, but a number past the rank limit (a pid) is not a rank either.
TEST(RankFromName, a_number_past_the_rank_limit_is_no_rank) {
  EXPECT_EQ(rank_from_name("trace_" + std::to_string(max_rank - 1)), max_rank - 1);
  EXPECT_EQ(rank_from_name("trace_1234567"), std::nullopt);
}

TEST(RankFromName, zeros_are_digits_of_the_rank) {
  EXPECT_EQ(rank_from_name("/tmp/nccl_trace_rank_10"), 10);
  EXPECT_EQ(rank_from_name("/tmp/nccl_trace_rank_101.pkl"), 101);
}

// A shell glob gives rank_10 before rank_2: the job's dumps are sorted by rank anyway, each
// remembering its file's position.
TEST(LoadDumps, files_given_out_of_rank_order_come_back_sorted_by_rank) {
  const fs::path folder = fresh_folder("glob");
  std::vector<std::string> paths;
  for (const char* rank : {"0", "1", "10", "2"}) paths.push_back(write_dump(folder, std::string("nccl_trace_rank_") + rank));
  std::vector<std::int64_t> ranks;
  std::vector<std::size_t> inputs;
  for (const Dump& d : load_dumps(paths, DumpFormat::auto_detect, 2)) {
    ranks.push_back(d.rank);
    inputs.push_back(d.input);
  }
  EXPECT_THAT(ranks, ElementsAre(0, 1, 2, 10));
  EXPECT_THAT(inputs, ElementsAre(0u, 1u, 3u, 2u));
  fs::remove_all(folder);
}

TEST(LoadDumps, dumps_whose_name_and_content_say_no_rank_take_their_position) {
  const fs::path folder = fresh_folder("norank");
  const std::vector<std::string> paths = {write_dump(folder, "host_a.json"), write_dump(folder, "host_b.json")};
  const std::vector<Dump> dumps = load_dumps(paths, DumpFormat::auto_detect, 1);
  ASSERT_EQ(dumps.size(), 2u);
  EXPECT_EQ(dumps[0].rank, 0);
  EXPECT_EQ(dumps[1].rank, 1);
  fs::remove_all(folder);
}

TEST(LoadDump, json_that_starts_with_whitespace_is_read_as_json) {
  const fs::path folder = fresh_folder("space");
  const std::string path = write_dump(folder, "rank_4", "", "\n\t\r\n ");
  EXPECT_EQ(load_dump(path, DumpFormat::auto_detect, 0).rank, 4);
  fs::remove_all(folder);
}

}  // namespace
}  // namespace amaxcheck::fr
