#pragma once
// Runs the CLI in-process (cli::run_main), capturing what it prints.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace amaxcheck::cli {

struct Ran {
  int code = 0;
  std::string out;
  std::string err;
};

/// `amaxcheck ARGS...`: its exit code, stdout and stderr.
inline Ran amaxcheck(std::vector<std::string> args) {
  args.insert(args.begin(), "amaxcheck");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Ran ran;
  ran.code = run_main(static_cast<int>(argv.size()), argv.data());
  ran.out = ::testing::internal::GetCapturedStdout();
  ran.err = ::testing::internal::GetCapturedStderr();
  return ran;
}

/// A path in the temporary folder, unique to the CLI tests and to this process: two test runs at
/// once (two build folders, or the mutation audit's work tree beside a developer's) must not
/// write each other's files.
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("amaxcheck_cli_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace amaxcheck::cli
