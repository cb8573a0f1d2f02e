#pragma once
/// The two readers of a dump file's bytes into a Document (document.h): PyTorch's pickle
/// (protocol 2, its default; 3 to 5 read too) and JSON. Both are bounded: at most max_nodes
/// values, and JSON nesting at most max_json_depth deep, so a hostile file is refused in
/// bounded time and memory.
///
/// The pickle reader is restricted to plain data: it knows the opcodes of dicts, lists, tuples,
/// strings, numbers, booleans, None and the memo, and refuses every other one. A pickle runs
/// code only through a global (GLOBAL, STACK_GLOBAL, INST, OBJ, the extension registry) that
/// REDUCE / NEWOBJ / BUILD then call, or a persistent id; none of them is read, so nothing in a
/// dump can run. Bytes and sets are refused too: a Flight Recorder dump holds neither.

#include <memory>
#include <stdexcept>
#include <string>

#include "fr/document.h"

namespace amaxcheck::fr {

inline constexpr std::size_t max_nodes = std::size_t{1} << 24;
inline constexpr std::size_t max_json_depth = 512;

/// The pickle asks for more than plain data; nothing from it was executed.
struct RefusedInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The bytes are not a complete pickle / valid JSON (the message says where and why).
struct BrokenInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// JSON nested deeper than max_json_depth.
struct TooDeep : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A JSON string that is not valid Unicode (a lone surrogate escape, ill-formed UTF-8);
/// `where` is the path to it ("entries[1].profiling_name").
struct BadText : std::runtime_error {
  BadText(std::string where_, const std::string& why) : std::runtime_error(why), where(std::move(where_)) {}
  std::string where;
};
/// More than max_nodes values.
struct TooBig : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::unique_ptr<Document> read_pickle(std::string bytes);
std::unique_ptr<Document> read_json(std::string bytes);

}  // namespace amaxcheck::fr
