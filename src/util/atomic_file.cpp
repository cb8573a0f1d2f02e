#include "util/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/check.h"

namespace amaxcheck {

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string temp = fmt::format("{}.tmp.{}", path, static_cast<long>(::getpid()));
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

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace amaxcheck
