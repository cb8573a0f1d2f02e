#include "util/atomic_file.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "util/check.h"

namespace amaxcheck {
namespace {

/// The temporary file being written, for the signal handler. A handler may not allocate or
/// lock, so the name sits in a fixed buffer and `armed` says whether it is current. Writes are
/// serialized (`write_mutex`), so there is one such file at a time.
char pending_temp[4096];
std::atomic<bool> armed{false};
std::mutex write_mutex;

extern "C" void remove_temp_and_reraise(int signal_number) {
  if (armed.load()) ::unlink(pending_temp);  // async-signal-safe
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int signal_number : {SIGINT, SIGTERM}) {
      struct sigaction current {};
      if (::sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction handler {};
      handler.sa_handler = remove_temp_and_reraise;
      sigemptyset(&handler.sa_mask);
      ::sigaction(signal_number, &handler, nullptr);
    }
  });
}

/// Arms the handler for `temp` for the lifetime of the guard.
class PendingTemp {
 public:
  explicit PendingTemp(const std::string& temp) {
    if (temp.size() >= sizeof pending_temp) return;  // too long to remember: the sweep covers it
    std::memcpy(pending_temp, temp.c_str(), temp.size() + 1);
    armed.store(true);
  }
  ~PendingTemp() { armed.store(false); }
  PendingTemp(const PendingTemp&) = delete;
  PendingTemp& operator=(const PendingTemp&) = delete;
};

bool process_is_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

std::size_t remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string prefix = target.filename().string() + ".tmp.";
  fs::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  std::error_code error;
  std::size_t removed = 0;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ignored;
    if (process_is_gone(std::stol(pid)) && fs::remove(it->path(), ignored)) ++removed;
  }
  return removed;
}

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::lock_guard lock(write_mutex);
  install_handlers_once();
  remove_stale_temporaries(path);
  const std::string temp = fmt::format("{}.tmp.{}", path, static_cast<long>(::getpid()));
  const PendingTemp pending(temp);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temp.c_str());
    throw InputError(fmt::format("{}: cannot rename the temporary file into place: {}", path, std::strerror(error)));
  }
}

void create_parent_folders(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error) throw InputError(fmt::format("{}: cannot create its folder {}: {}", path, parent.string(), error.message()));
}

void check_parent_folders(const std::string& path) {
  for (std::filesystem::path folder = std::filesystem::path(path).parent_path(); !folder.empty();
       folder = folder.parent_path()) {
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(folder, error);
    if (status.type() == std::filesystem::file_type::not_found) {
      if (folder == folder.parent_path()) return;
      continue;
    }
    if (error) throw InputError(fmt::format("{}: cannot look at its folder {}: {}", path, folder.string(), error.message()));
    if (status.type() != std::filesystem::file_type::directory) {
      throw InputError(fmt::format("{}: {} is not a folder, so the file cannot be written there", path, folder.string()));
    }
    return;
  }
}

void check_distinct_files(const std::string& output, std::string_view output_option, const std::string& other,
                          std::string_view other_name) {
  if (output.empty()) throw InputError(fmt::format("{}: expected a file path, got an empty one", output_option));
  if (other.empty()) return;
  std::error_code error;
  bool same = false;
  if (std::filesystem::exists(output, error) && std::filesystem::exists(other, error)) {
    same = std::filesystem::equivalent(output, other, error);
  } else {
    // Not both there yet: the same path, however it is spelled.
    same = std::filesystem::weakly_canonical(output, error) == std::filesystem::weakly_canonical(other, error);
  }
  // A path that cannot be looked at fails where it is read or written, naming it.
  if (error || !same) return;
  throw InputError(fmt::format("{} {}: the same file as the {} {}; writing it would replace that", output_option, output,
                               other_name, other));
}

void refuse_folder(const std::string& path, std::string_view where, std::string_view what) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw InputError(fmt::format("{}: a folder, not {}", where, what));
}

std::string read_file(const std::string& path) {
  refuse_folder(path, path, "a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace amaxcheck
