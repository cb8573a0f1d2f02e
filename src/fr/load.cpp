// Reading dump files (dump.h): the format, the file-level bounds and errors, and every file of
// a job on a pool of threads.
#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "fr/dump.h"
#include "fr/readers.h"
#include "util/check.h"

namespace amaxcheck::fr {
namespace {

std::string read_file(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read the dump ({})", path, ec.message()));
  if (size > max_file_bytes) {
    throw InputError(fmt::format("{}: {} bytes, over the {}-byte limit for one dump (a Flight Recorder dump of "
                                 "2000 records is about 1 MB)", path, size, max_file_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    throw InputError(fmt::format("{}: cannot read the dump ({})", path, std::strerror(errno)));
  }
  return bytes;
}

bool looks_like_json(std::string_view bytes) {
  const std::size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (bytes[first] == '{' || bytes[first] == '[');
}

std::string cut_message(std::string_view what) {
  return what.size() <= max_text ? std::string(what) : fmt::format("{}... ({} chars)", what.substr(0, max_text), what.size());
}

}  // namespace

std::optional<std::int64_t> rank_from_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  // an optional .extension of letters, then the digits before it
  const std::size_t dot = name.rfind('.');
  if (dot != std::string::npos && dot + 1 < name.size() &&
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", dot + 1) == std::string::npos) {
    name.resize(dot);
  }
  std::size_t start = name.size();
  while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
  if (start == name.size() || name.size() - start > 7) return std::nullopt;
  const std::int64_t rank = std::stoll(name.substr(start));
  return rank < max_rank ? std::optional(rank) : std::nullopt;
}

Dump load_dump(const std::string& path, DumpFormat format, std::int64_t fallback_rank) {
  std::string bytes = read_file(path);
  if (bytes.empty()) throw InputError(fmt::format("{}: empty file, not a Flight Recorder dump", path));
  const bool json = format == DumpFormat::json || (format == DumpFormat::auto_detect && looks_like_json(bytes));
  std::unique_ptr<Document> doc;
  try {
    doc = json ? read_json(std::move(bytes)) : read_pickle(std::move(bytes));
  } catch (const RefusedInput& e) {
    throw InputError(fmt::format("{}: refused: {}. A Flight Recorder dump holds only plain containers, strings and "
                                 "numbers; nothing from this file was executed", path, e.what()));
  } catch (const TooDeep&) {
    throw InputError(fmt::format("{}: JSON nested too deeply to be a Flight Recorder dump", path));
  } catch (const BadText& e) {
    throw InputError(fmt::format("{}: {}: {}; a dump holds UTF-8 text", path, e.where, e.what()));
  } catch (const TooBig& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  } catch (const BrokenInput& e) {
    throw InputError(json ? fmt::format("{}: not valid JSON ({}); truncated?", path, cut_message(e.what()))
                          : fmt::format("{}: not a complete pickle ({}); truncated or not a Flight Recorder dump?",
                                        path, cut_message(e.what())));
  }
  return validate_dump(*doc, path, fallback_rank);
}

namespace {

/// `make(load_dump(...))` for every file on up to `jobs` threads, sorted by rank (`rank_of`),
/// duplicates refused; the first error in `paths` order is thrown.
template <typename T, typename Make, typename RankOf>
std::vector<T> load_parallel(const std::vector<std::string>& paths, DumpFormat format, unsigned jobs, Make make,
                             RankOf rank_of) {
  std::vector<std::optional<T>> done(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < paths.size(); i = next++) {
      try {
        Dump dump = load_dump(paths[i], format, static_cast<std::int64_t>(i));
        dump.input = i;
        done[i] = make(std::move(dump));
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(paths.size())));
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  pool.clear();  // joins
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  std::map<std::int64_t, std::size_t> by_rank;
  for (std::size_t i = 0; i < done.size(); ++i) {
    const auto [it, fresh] = by_rank.emplace(rank_of(*done[i]), i);
    if (!fresh) {
      throw InputError(fmt::format("{}: rank {} already comes from {}", paths[i], it->first, paths[it->second]));
    }
  }
  std::vector<T> out;
  out.reserve(done.size());
  for (const auto& [rank, i] : by_rank) out.push_back(std::move(*done[i]));
  return out;
}

}  // namespace

std::vector<Dump> load_dumps(const std::vector<std::string>& paths, DumpFormat format, unsigned jobs) {
  return load_parallel<Dump>(paths, format, jobs, [](Dump d) { return d; }, [](const Dump& d) { return d.rank; });
}

}  // namespace amaxcheck::fr
