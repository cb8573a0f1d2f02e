// TOML documents read as the JSON they stand for: every value kind converts, and what has no
// JSON counterpart (dates), bad syntax and deep nesting are InputErrors naming file and line.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "io/toml_file.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

std::string toml_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name + ".toml";
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path) {
  try {
    read_toml_file(path, "suite file");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TomlFile, every_value_kind_becomes_its_json_counterpart) {
  const std::string path = toml_file("kinds", R"(
suite = "s"   # a comment with [brackets
runs = 50
budget = 1.5
keep_going = true
list = [[1, 2], [3]]
scenario.knobs = { dp = 2, amax-order = "same" }
text = """
a "quoted" [line]"""

[[cases]]
name = "first"
[[cases]]
name = "second"
expect.kinds = ["data_race"]
)");
  const nlohmann::json expected = nlohmann::json::parse(R"({
    "suite": "s", "runs": 50, "budget": 1.5, "keep_going": true, "list": [[1, 2], [3]],
    "scenario": {"knobs": {"dp": 2, "amax-order": "same"}}, "text": "a \"quoted\" [line]",
    "cases": [{"name": "first"}, {"name": "second", "expect": {"kinds": ["data_race"]}}]})");
  EXPECT_EQ(read_toml_file(path, "suite file"), expected);
}

TEST(TomlFile, a_syntax_error_names_the_file_and_line) {
  const std::string path = toml_file("syntax", "suite = \"s\"\n\nruns = = 3\n");
  const std::string error = error_of(path);
  EXPECT_EQ(error.rfind(path + ":3: invalid TOML: ", 0), 0u) << error;
}

TEST(TomlFile, a_date_is_refused_naming_its_field) {
  const std::string error = error_of(toml_file("date", "[defaults]\nwhen = 2026-12-01\n"));
  EXPECT_NE(error.find("field 'defaults.when': expected a string, number, boolean, array or table"), std::string::npos)
      << error;
}

TEST(TomlFile, nesting_deeper_than_the_json_limit_is_refused_before_parsing) {
  const std::string deep = "a = " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  const std::string error = error_of(toml_file("deep", "# [[[[ in a comment\ns = \"[[[[\"\n" + deep));
  EXPECT_NE(error.find(":3: nested deeper than 64 levels"), std::string::npos) << error;
  // Brackets inside strings and comments do not count.
  const std::string fine = "a = " + std::string(60, '[') + std::string(60, ']') + "\n";
  EXPECT_NO_THROW(read_toml_file(toml_file("fine", "s = '" + std::string(200, '[') + "'\n" + fine), "suite file"));
}

TEST(TomlFile, tables_nested_by_dotted_keys_and_headers_are_bounded_like_brackets) {
  // No bracket nests these. cpptoml builds and frees them recursively: 400,000 parts once
  // overflowed the stack (a crash), so a key or header of more than 64 parts is refused before
  // parsing, naming its line.
  std::string key = "a";
  for (int i = 0; i < 400000; ++i) key += ".a";
  for (const std::string& text : {"s = 1.5\n" + key + " = 1\n", "s = 1\n[" + key + "]\nx = 1\n"}) {
    const std::string error = error_of(toml_file("dotted", text));
    EXPECT_NE(error.find(":2: nested deeper than 64 levels"), std::string::npos) << error.substr(0, 200);
  }
  // Each within the limit, together beyond it: the conversion's own bound names the field.
  std::string forty = "a";
  for (int i = 0; i < 40; ++i) forty += ".a";
  const std::string error = error_of(toml_file("dotted_both", "[" + forty + "]\n" + forty + " = 1\n"));
  EXPECT_NE(error.find("tables nested deeper than 64 levels"), std::string::npos) << error.substr(0, 200);
  // Dots in values and strings are not a key's parts.
  const std::string values = "v = [" + std::string(200, '1') + ".5, 2.5]\nw = {x = 1.5, y.z = '" + std::string(100, '.') + "'}\n";
  EXPECT_NO_THROW(read_toml_file(toml_file("dotted_fine", forty + " = 1\n" + values), "suite file"));
}

TEST(TomlFile, each_line_s_dotted_key_counts_its_own_parts_and_lines_in_strings_count) {
  // A suite of many cases, each with dotted keys: 100 lines of two parts each are no key of 200.
  std::string many;
  for (int i = 0; i < 100; ++i) many += "k" + std::to_string(i) + ".verdict = \"hazard\"\n";
  EXPECT_NO_THROW(read_toml_file(toml_file("many_dotted", many), "suite file"));
  // After a multi-line string of three lines, a key too deep is on line 5, not line 3.
  std::string key = "a";
  for (int i = 0; i < 70; ++i) key += ".a";
  const std::string error = error_of(toml_file("after_multiline", "d = \"\"\"\none\ntwo\"\"\"\nx = 1\n" + key + " = 1\n"));
  EXPECT_NE(error.find("after_multiline.toml:5: nested deeper than 64 levels"), std::string::npos) << error;
}

TEST(TomlFile, text_that_is_not_utf8_is_refused_naming_its_line) {
  // Once read as is: an internal error when the suite's name was written as JSON.
  const std::string path = toml_file("not_utf8", "suite = \"s\"\n\nname = \"seed \xff\"\n");
  const std::string error = error_of(path);
  EXPECT_EQ(error.rfind(path + ":3: not UTF-8 text", 0), 0u) << error;
}

TEST(TomlFile, a_missing_file_is_named) {
  EXPECT_EQ(error_of("/nonexistent/x.toml"), "/nonexistent/x.toml: cannot open suite file");
}

}  // namespace
}  // namespace amaxcheck
