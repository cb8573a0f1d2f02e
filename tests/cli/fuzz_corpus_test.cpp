// Every input of the committed fuzz corpus (fuzz/corpus/, crashers found included) keeps the
// exit-code contract through the CLI: 0 or 1 for what it accepts, 2 for what it refuses;
// never 3 (internal error) or a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "run_cli.h"

namespace amaxcheck::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> corpus(const std::string& target) {
  const char* root = std::getenv("AMAXCHECK_ROOT");
  const fs::path folder = fs::path(root != nullptr ? root : ".") / "fuzz" / "corpus" / target;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool keeps_the_contract(int code) { return code == exit_clean || code == exit_hazard || code == exit_bad_input; }

TEST(FuzzCorpus, every_scenario_input_is_checked_or_refused_as_bad_input) {
  std::vector<std::string> files = corpus("scenario");
  for (const std::string& file : corpus("run")) files.push_back(file);
  ASSERT_GT(files.size(), 10u) << "the committed corpus is missing";
  const std::string trace = temp_path("fuzz_corpus.jsonl");
  for (const std::string& file : files) {
    const Ran r = amaxcheck({"check", file, "--runs", "3", "--quiet", "--trace-out", trace, "--max-memory", "256M"});
    EXPECT_TRUE(keeps_the_contract(r.code)) << file << ": exit " << r.code << "\n" << r.err.substr(0, 500);
  }
}

TEST(FuzzCorpus, every_trace_input_is_replayed_exported_or_refused_as_bad_input) {
  const std::vector<std::string> files = corpus("trace");
  ASSERT_GT(files.size(), 5u) << "the committed corpus is missing";
  const std::string timeline = temp_path("fuzz_corpus.perfetto.json");
  for (const std::string& file : files) {
    const Ran replay = amaxcheck({"replay", file, "--max-memory", "256M"});
    EXPECT_TRUE(keeps_the_contract(replay.code)) << file << ": exit " << replay.code << "\n" << replay.err.substr(0, 500);
    const Ran exported = amaxcheck({"export", file, "--perfetto", timeline});
    EXPECT_TRUE(keeps_the_contract(exported.code)) << file << ": exit " << exported.code << "\n"
                                                   << exported.err.substr(0, 500);
  }
}

}  // namespace
}  // namespace amaxcheck::cli
