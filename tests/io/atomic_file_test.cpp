// Atomic writes leave nothing behind: a temporary file of a process that is gone is swept by the
// next write to the same path, and SIGTERM during a write removes the writer's own.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "util/atomic_file.h"
#include "util/check.h"

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
  // Not named by a pid: a user's files, whatever the number in them.
  const std::string not_pids[] = {target + ".tmp.bak", target + ".tmp." + std::to_string(dead_pid()) + "old"};
  for (const std::string& path : {stale, live, other, not_pids[0], not_pids[1]}) std::ofstream(path) << "half";
  write_file_atomically(target, "whole\n");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live)) << "a running process's temporary file is its own business";
  EXPECT_TRUE(fs::exists(other));
  for (const std::string& path : not_pids) EXPECT_TRUE(fs::exists(path)) << path;
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

TEST(AtomicFile, a_write_that_fails_leaves_the_old_file_whole_and_no_temporary) {
  // The file size limit makes the write fail part way, as a full disk would. In a child, so
  // that the limit is its own.
  const fs::path folder = fresh_folder("short_write");
  const std::string target = (folder / "trace.jsonl").string();
  std::ofstream(target) << "old\n";
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing
    const rlimit limit{16, 16};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      write_file_atomically(target, std::string(4096, 'x'));
    } catch (const InputError&) {
      ::_exit(0);
    }
    ::_exit(1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the failed write was not refused";
  EXPECT_EQ(fs::file_size(target), 4u) << "the old file was replaced by a truncated one";
  EXPECT_EQ(temporaries_in(folder), 0u);
  fs::remove_all(folder);
}

TEST(AtomicFile, a_rename_that_fails_is_refused_and_leaves_no_temporary) {
  const fs::path folder = fresh_folder("rename");
  const fs::path target = folder / "trace.jsonl";
  fs::create_directories(target / "inside");  // a folder that is not empty takes no file's place
  EXPECT_THROW(write_file_atomically(target.string(), "whole\n"), InputError);
  EXPECT_EQ(temporaries_in(folder), 0u);
  fs::remove_all(folder);
}

TEST(AtomicFile, two_spellings_of_one_path_are_one_file_before_either_exists) {
  const fs::path folder = fresh_folder("distinct");
  const std::string trace = (folder / "run.jsonl").string();
  const std::string same = (folder / "." / "sub" / ".." / "run.jsonl").string();
  EXPECT_THROW(check_distinct_files(trace, "--trace-out", same, "--junit-xml"), InputError);
  EXPECT_NO_THROW(check_distinct_files(trace, "--trace-out", (folder / "run.xml").string(), "--junit-xml"));
  fs::remove_all(folder);
}

}  // namespace
}  // namespace amaxcheck
