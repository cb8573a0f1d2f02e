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
/// Creates the folders above `path` that are missing; InputError naming the folder when one
/// cannot be made (a part of it is a file, no permission).
void create_parent_folders(const std::string& path);
/// Refuses, before any work, an output path whose folders could never be made: InputError when
/// the nearest part of its folder that exists is not a folder, or cannot be looked at. Makes
/// nothing (an output written only on a hazard leaves no empty folder behind).
void check_parent_folders(const std::string& path);
/// Refuses an output that would replace another file of the same command (its input, or
/// another output): InputError naming both when `output` and `other` are one file, through a
/// link or another spelling too, or naming the option when `output` is empty.
void check_distinct_files(const std::string& output, std::string_view output_option, const std::string& other,
                          std::string_view other_name);
/// Reads a whole file; InputError naming the path when it cannot, or when it is a folder.
std::string read_file(const std::string& path);
/// Refuses a folder given where a file is read: InputError "WHERE: a folder, not WHAT" (`where`
/// the path as messages print it). An ifstream opens a folder, then reads nothing, so a reader
/// would otherwise report an empty or truncated file.
void refuse_folder(const std::string& path, std::string_view where, std::string_view what);

/// Removes `<path>.tmp.<pid>` files of processes that are gone; returns how many. Called by
/// write_file_atomically; exposed for tests.
std::size_t remove_stale_temporaries(const std::string& path);

}  // namespace amaxcheck
