// Atomic writes leave nothing behind: a temporary file of a process that is gone is swept by the
// next write to the same path, and SIGTERM during a write removes the writer's own.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "util/atomic_file.h"

namespace amaxcheck {
namespace {

namespace fs = std::filesystem;

fs::path fresh_folder(const std::string& name) {
  const fs::path folder = fs::temp_directory_path() / ("amaxcheck_atomic_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

/// The pid of a child that has exited and been reaped: a process that no longer runs.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

std::size_t temporaries_in(const fs::path& folder) {
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    count += entry.path().filename().string().find(".tmp.") != std::string::npos ? 1 : 0;
  }
  return count;
}

TEST(AtomicFile, a_write_sweeps_temporaries_of_dead_processes_and_keeps_live_ones) {
  const fs::path folder = fresh_folder("sweep");
  const std::string target = (folder / "trace.jsonl").string();
  const std::string stale = target + ".tmp." + std::to_string(dead_pid());
  const std::string live = target + ".tmp." + std::to_string(::getppid());
  const std::string other = (folder / "other.jsonl.tmp.1").string();  // not next to this target
  for (const std::string& path : {stale, live, other}) std::ofstream(path) << "half";
  write_file_atomically(target, "whole\n");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live)) << "a running process's temporary file is its own business";
  EXPECT_TRUE(fs::exists(other));
  EXPECT_EQ(fs::file_size(target), 6u);
  fs::remove_all(folder);
}

TEST(AtomicFile, sigterm_during_a_write_removes_the_temporary_file) {
  const fs::path folder = fresh_folder("sigterm");
  const std::string target = (folder / "big.jsonl").string();
  const pid_t child = ::fork();
  if (child == 0) {
    const std::string content(64u << 20, 'x');  // long enough that the signal lands mid-write
    for (;;) write_file_atomically(target, content);
  }
  // Wait until the child is writing (its temporary file exists), then stop it.
  const fs::path temp = target + ".tmp." + std::to_string(child);
  for (int i = 0; i < 2000 && !fs::exists(temp); ++i) ::usleep(1000);
  ASSERT_TRUE(fs::exists(temp)) << "the child never started writing";
  ::kill(child, SIGTERM);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "the signal still ends the process";
  EXPECT_EQ(temporaries_in(folder), 0u);
  fs::remove_all(folder);
}

}  // namespace
}  // namespace amaxcheck
