#pragma once
/// Atomic file writes: the content goes to a temporary file next to `path` (`<path>.tmp.<pid>`),
/// which is then renamed over it, so a reader never sees half a file.
///
/// Nothing is left behind either:
/// - SIGINT or SIGTERM during a write removes the temporary file, then the signal takes its
///   usual course (the handler is installed on the first write, only where the signal still
///   has its default action, so a program's own handlers are kept);
/// - a process killed outright (SIGKILL, a crash) leaves its temporary file, which the next
///   write to the same path removes: `<path>.tmp.<pid>` of a pid that no longer runs.

#include <string>
#include <string_view>

namespace amaxcheck {

/// Writes `content` to `path` atomically; InputError naming the path when it cannot.
void write_file_atomically(const std::string& path, std::string_view content);
/// Reads a whole file; InputError naming the path when it cannot.
std::string read_file(const std::string& path);

/// Removes `<path>.tmp.<pid>` files of processes that are gone; returns how many. Called by
/// write_file_atomically; exposed for tests.
std::size_t remove_stale_temporaries(const std::string& path);

}  // namespace amaxcheck
