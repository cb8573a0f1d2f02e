// The dump readers (fr/readers.h): plain data in, everything else refused, bounded.
// The pickles are CPython's own bytes (pickle.dumps(..., protocol=2)), written out here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "fr/readers.h"

namespace amaxcheck::fr {
namespace {

using namespace std::string_literals;

std::string text_of(const Document& doc, NodeId id) { return std::string(doc[id].text); }

TEST(PickleReader, reads_dicts_lists_tuples_strings_numbers_and_the_memo) {
  // pickle.dumps({'a': [1, 'x'], 'b': ('y', None, True, 1.5)}, protocol=2)
  const auto doc = read_pickle(
      "\x80\x02}q\x00(X\x01\x00\x00\x00" "aq\x01]q\x02(K\x01X\x01\x00\x00\x00xq\x03" "eX\x01\x00\x00\x00" "bq\x04"
      "(X\x01\x00\x00\x00yq\x05N\x88G?\xf8\x00\x00\x00\x00\x00\x00tq\x06u."s);
  const Node& top = (*doc)[doc->root];
  ASSERT_EQ(top.kind, Kind::dict);
  ASSERT_EQ(top.items.size(), 4u);
  EXPECT_EQ(text_of(*doc, top.items[0]), "a");
  const Node& list = (*doc)[top.items[1]];
  ASSERT_EQ(list.kind, Kind::list);
  ASSERT_EQ(list.items.size(), 2u);
  EXPECT_EQ((*doc)[list.items[0]].integer, 1);
  EXPECT_EQ(text_of(*doc, list.items[1]), "x");
  const Node& tuple = (*doc)[top.items[3]];
  ASSERT_EQ(tuple.kind, Kind::tuple);
  ASSERT_EQ(tuple.items.size(), 4u);
  EXPECT_EQ((*doc)[tuple.items[1]].kind, Kind::none);
  EXPECT_TRUE((*doc)[tuple.items[2]].truth);
  EXPECT_EQ((*doc)[tuple.items[3]].real, 1.5);
}

TEST(PickleReader, a_list_the_memo_shares_is_one_node) {
  // x = ['f']; pickle.dumps([x, x], protocol=2)
  const auto doc = read_pickle("\x80\x02]q\x00(]q\x01X\x01\x00\x00\x00" "fq\x02" "ah\x01" "e."s);
  const Node& top = (*doc)[doc->root];
  ASSERT_EQ(top.items.size(), 2u);
  EXPECT_EQ(top.items[0], top.items[1]);
}

TEST(PickleReader, integers_keep_their_sign_and_those_past_64_bits_are_marked) {
  EXPECT_EQ((*read_pickle("\x80\x02J\xfb\xff\xff\xff."s))[0].integer, -5);
  EXPECT_EQ((*read_pickle("\x80\x02M,\x01."s))[0].integer, 300);
  const auto big = read_pickle("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."s);  // 1 << 64
  EXPECT_EQ((*big)[big->root].kind, Kind::big_integer);
  const auto edge = read_pickle("\x80\x02\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80."s);  // -2^63
  EXPECT_EQ((*edge)[edge->root].kind, Kind::integer);
  EXPECT_EQ((*edge)[edge->root].integer, INT64_MIN);
  const auto past = read_pickle("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00."s);  // 2^63
  EXPECT_EQ((*past)[past->root].kind, Kind::big_integer);
}

TEST(PickleReader, a_global_is_refused_and_named) {
  // the start of pickle.dumps(exec-payload, protocol=2): GLOBAL builtins exec, then REDUCE
  try {
    read_pickle("\x80\x02\x63__builtin__\nexec\nq\x00X\x01\x00\x00\x00xq\x01\x85R."s);
    FAIL() << "not refused";
  } catch (const RefusedInput& e) {
    EXPECT_STREQ(e.what(), "it asks for the global __builtin__.exec");
  }
  EXPECT_THROW(read_pickle("\x80\x04\x8c\x08" "builtins\x8c\x04\x65xec\x93."s), RefusedInput);  // STACK_GLOBAL
}

TEST(PickleReader, calls_persistent_ids_bytes_and_sets_are_refused) {
  EXPECT_THROW(read_pickle("\x80\x02N)R."s), RefusedInput);                   // REDUCE
  EXPECT_THROW(read_pickle("\x80\x02X\x01\x00\x00\x00tQ."s), RefusedInput);   // BINPERSID
  EXPECT_THROW(read_pickle("\x80\x03\x43\x02hi."s), RefusedInput);            // SHORT_BINBYTES
  EXPECT_THROW(read_pickle("\x80\x04\x8f."s), RefusedInput);                  // EMPTY_SET
}

TEST(PickleReader, a_truncated_or_malformed_pickle_is_broken_not_refused) {
  EXPECT_THROW(read_pickle("\x80\x02]q\x00(K\x01"s), BrokenInput);  // no STOP
  EXPECT_THROW(read_pickle("\x80\x02X\xff\x00\x00\x00" "ab."s), BrokenInput);  // a string past the end
  EXPECT_THROW(read_pickle("\x80\x02h\x07."s), BrokenInput);  // a memo key never put
  EXPECT_THROW(read_pickle("\x80\x02K\x01K\x02" "a."s), BrokenInput);  // APPEND to an int
  EXPECT_THROW(read_pickle("\x80\x02\xfe."s), BrokenInput);  // no such opcode
  EXPECT_THROW(read_pickle("(S'x'\n."s), BrokenInput);  // protocol 0's text strings are not read
}

TEST(PickleReader, a_malformed_pickle_says_what_is_wrong_and_at_which_byte) {
  // Each a protocol 2 pickle ("\x80\x02" first, so the faulty opcode is at byte 2 or later).
  const std::pair<std::string, std::string> cases[] = {
      {"\x80\x02."s, "STOP with an empty stack at byte 2"},
      {"\x80\x02" "0."s, "stack underflow at byte 2"},                          // POP
      {"\x80\x02N\x86."s, "stack underflow at byte 3"},                         // TUPLE2 of one value
      {"\x80\x02(N0" "0."s, "stack underflow at byte 5"},                      // POP below the MARK
      {"\x80\x02t."s, "no MARK before it at byte 2"},                          // TUPLE
      {"\x80\x02(Nd."s, "DICT with an odd number of items at byte 4"},
      {"\x80\x02}(Nu."s, "SETITEMS with an odd number of items at byte 5"},
      {"\x80\x02Na."s, "APPEND with nothing to add to at byte 3"},
      {"\x80\x02}Na."s, "APPEND to a dict at byte 4"},
      {"\x80\x02" "2."s, "DUP with an empty stack at byte 2"},
      {"\x80\x02q\x00."s, "memo put with an empty stack at byte 2"},
      {"\x80\x02h\x05."s, "memo key 5 not found at byte 2"},
      {"\x80\x02\x8b\xff\xff\xff\xff."s, "LONG4 with a negative length at byte 2"},
      {"\x80\x02I1x\n."s, "an INT that is not a decimal number at byte 2"},
      {"\x80\x02S'a'\n."s, "opcode 'S' of the text protocol 0 (PyTorch writes protocol 2) at byte 2"},
      {"\x80\x02\xff."s, "unknown opcode 0xff at byte 2"},
      {"\x80\x02X\x05\x00\x00\x00" "ab."s, "pickle data was truncated"},
      {"\x80\x02N"s, "pickle data was truncated"},                            // no STOP
  };
  for (const auto& [bytes, message] : cases) {
    try {
      read_pickle(bytes);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const BrokenInput& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
}

TEST(PickleReader, protocol_1s_decimal_integers_are_read) {
  EXPECT_EQ((*read_pickle("I6000000000\n."s))[0].integer, 6000000000);
  EXPECT_EQ((*read_pickle("L-7L\n."s))[0].integer, -7);
  const auto big = read_pickle("I99999999999999999999\n."s);
  EXPECT_EQ((*big)[big->root].kind, Kind::big_integer);
  EXPECT_THROW(read_pickle("I12x\n."s), BrokenInput);
}

TEST(PickleReader, a_far_memo_key_does_not_allocate_up_to_it) {
  // LONG_BINPUT 4e9 then LONG_BINGET of it: kept in the map, not a 4e9-entry vector
  const auto doc = read_pickle("\x80\x02K\x05r\x00\x28\x6b\xeej\x00\x28\x6b\xee\x86."s);
  const Node& pair = (*doc)[doc->root];
  ASSERT_EQ(pair.items.size(), 2u);
  EXPECT_EQ(pair.items[0], pair.items[1]);
}

TEST(JsonReader, reads_the_same_tree) {
  const auto doc = read_json(R"({"a": [1, "x"], "b": null, "c": 18446744073709551616})");
  const Node& top = (*doc)[doc->root];
  ASSERT_EQ(top.items.size(), 6u);
  EXPECT_EQ((*doc)[(*doc)[top.items[1]].items[0]].integer, 1);
  EXPECT_EQ((*doc)[top.items[5]].kind, Kind::big_integer);  // 2^64: an integer, not a float
}

// Python and nlohmann write small floats with an exponent (a duration_ms of 5e-05).
TEST(JsonReader, a_number_with_an_exponent_is_a_float) {
  const auto doc = read_json("[5e-05, 1E3]");
  const Node& top = (*doc)[doc->root];
  ASSERT_EQ(top.items.size(), 2u);
  EXPECT_EQ((*doc)[top.items[0]].kind, Kind::real);
  EXPECT_EQ((*doc)[top.items[0]].real, 5e-05);
  EXPECT_EQ((*doc)[top.items[1]].kind, Kind::real);
  EXPECT_EQ((*doc)[top.items[1]].real, 1000.0);
}

TEST(JsonReader, nesting_past_the_limit_is_refused) {
  const std::string deep = std::string(max_json_depth + 1, '[') + std::string(max_json_depth + 1, ']');
  EXPECT_THROW(read_json(deep), TooDeep);
  const std::string fine = std::string(max_json_depth, '[') + std::string(max_json_depth, ']');
  EXPECT_NO_THROW(read_json(fine));
}

TEST(JsonReader, a_lone_surrogate_is_refused_with_the_path_to_it) {
  try {
    read_json(R"({"entries": [{"state": "ok"}, {"profiling_name": "\udcff"}]})");
    FAIL() << "accepted";
  } catch (const BadText& e) {
    EXPECT_EQ(e.where, "entries[1].profiling_name");
  }
}

// A raw Latin-1 byte (a file name in a frame) is bad text in a field, not a truncated file.
TEST(JsonReader, ill_formed_utf8_is_refused_with_the_path_to_it) {
  try {
    read_json("{\"entries\": [{\"frames\": [{\"filename\": \"caf\xe9.py\"}]}]}");
    FAIL() << "accepted";
  } catch (const BadText& e) {
    EXPECT_EQ(e.where, "entries[0].frames[0].filename");
    EXPECT_THAT(e.what(), ::testing::HasSubstr("ill-formed UTF-8"));
  }
}

TEST(JsonReader, a_syntax_error_is_broken) {
  EXPECT_THROW(read_json(R"({"a": [1, )"), BrokenInput);
}

}  // namespace
}  // namespace amaxcheck::fr
