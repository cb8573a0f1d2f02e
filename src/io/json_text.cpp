// The SAX pre-pass behind parse_json_text: it tracks the path of the value being read (for
// the field name) and the depth, and keeps the first error with its byte offset.
#include "io/json_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <vector>

#include "util/check.h"

namespace amaxcheck {
namespace {

using json = nlohmann::json;

class Prepass {
 public:
  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(json::number_integer_t) { return value(); }
  bool number_unsigned(json::number_unsigned_t) { return value(); }
  bool number_float(json::number_float_t, const std::string&) { return value(); }
  bool string(std::string&) { return value(); }
  bool binary(json::binary_t&) { return value(); }
  bool start_object(std::size_t) { return open(false); }
  bool start_array(std::size_t) { return open(true); }
  bool key(std::string& name) {
    Frame& frame = frames_.back();
    frame.key = name;
    // A key given twice: nlohmann keeps the last, other readers the first; which one the
    // author meant is unknown, so neither is taken.
    if (!frame.seen(name)) return true;
    duplicate_ = true;
    return false;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t byte, const std::string& token, const json::exception& error) {
    byte_ = byte;
    token_ = token;
    error_id_ = error.id;
    error_ = error.what();
    return false;
  }

  /// Where the value being read sits: `ranks[1].threads[0]`, or empty at the top.
  std::string path() const {
    std::string text;
    for (const Frame& frame : frames_) {
      if (frame.array) text += fmt::format("[{}]", frame.index);
      else text += (text.empty() ? "" : ".") + frame.key;
    }
    return text;
  }
  bool too_deep() const { return too_deep_; }
  bool duplicate() const { return duplicate_; }
  const std::optional<std::size_t>& byte() const { return byte_; }
  const std::string& token() const { return token_; }
  int error_id() const { return error_id_; }
  const std::string& error() const { return error_; }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;  ///< arrays: the element being read
    std::string key;        ///< objects: the member being read
    /// Objects: the members read so far, scanned while they are few (most objects), hashed
    /// beyond (a hostile object of 200,000 keys was quadratic).
    std::vector<std::string> keys;
    std::unordered_set<std::string> many;
    /// Whether `name` was read before in this object; remembers it.
    bool seen(const std::string& name) {
      constexpr std::size_t scanned = 16;
      if (many.empty()) {
        if (std::find(keys.begin(), keys.end(), name) != keys.end()) return true;
        keys.push_back(name);
        if (keys.size() > scanned) many.insert(keys.begin(), keys.end());
        return false;
      }
      return !many.insert(name).second;
    }
  };
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  bool open(bool array) {
    if (frames_.size() >= max_json_depth) {
      too_deep_ = true;
      return false;
    }
    frames_.push_back(Frame{array, 0, {}, {}, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return value();
  }

  std::vector<Frame> frames_;
  bool too_deep_ = false;
  bool duplicate_ = false;
  std::optional<std::size_t> byte_;
  std::string token_;
  int error_id_ = 0;
  std::string error_;
};

/// "LINE:COLUMN" of byte offset `byte` (nlohmann counts the offending character as read).
std::string position(std::string_view text, std::size_t byte, std::size_t first_line) {
  std::size_t line = first_line, column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("{}:{}", line, column);
}

}  // namespace

void check_json_text(std::string_view text, const std::string& where, std::size_t first_line) {
  Prepass pass;
  if (json::sax_parse(text, &pass)) return;
  const std::string field = pass.path().empty() ? std::string() : fmt::format("field '{}': ", pass.path());
  if (pass.duplicate()) {
    // SAX gives no position for a key: the line when the text is one (a trace line), else the field.
    const std::string at = text.find('\n') == std::string_view::npos ? fmt::format("{}:{}", where, first_line) : where;
    throw InputError(fmt::format("{}: {}given twice in one object (expected each key once)", at, field));
  }
  if (pass.too_deep()) {
    throw InputError(fmt::format("{}:{}: {}nested deeper than {} levels (the limit of every file amaxcheck reads)",
                                 where, first_line, field, max_json_depth));
  }
  AMAX_CHECK(pass.byte().has_value(), "the SAX pre-pass stopped without an error");
  const std::string at = fmt::format("{}:{}", where, position(text, *pass.byte(), first_line));
  if (pass.error_id() == 406) {  // out_of_range.406: a number beyond a double
    throw InputError(fmt::format("{}: {}number {} overflows a double (expected a finite number)", at, field,
                                 pass.token()));
  }
  std::string what = pass.error();
  const std::size_t colon = what.find(": ", what.find("parse error"));
  if (colon != std::string::npos) what = what.substr(colon + 2);
  throw InputError(fmt::format("{}: invalid JSON: {}", at, what));
}

}  // namespace amaxcheck
