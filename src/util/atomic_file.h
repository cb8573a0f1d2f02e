#pragma once
/// Atomic file writes: the content goes to a temporary file next to `path`, which is then
/// renamed over it, so a reader never sees half a file and a crash never leaves one.

#include <string>
#include <string_view>

namespace amaxcheck {

/// Writes `content` to `path` atomically; InputError naming the path when it cannot.
void write_file_atomically(const std::string& path, std::string_view content);
/// Reads a whole file; InputError naming the path when it cannot.
std::string read_file(const std::string& path);

}  // namespace amaxcheck
