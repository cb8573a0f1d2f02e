#pragma once
/// One Flight Recorder dump file as plain data: the tree both readers (readers.h) build and the
/// validator (dump.h) reads.
///
/// Nodes live in one vector and refer to each other by index, so a value a pickle's memo shares
/// (one frame list under every entry) is one node however often it is referenced: nothing is
/// copied, and the validator reads it once (it caches by node). Text is a view into bytes the
/// document owns; it is checked for UTF-8 only where the validator reads it, so the error can
/// name the field. Containers' items come from one arena per document (most of a dump's values
/// are small lists and dicts: allocating and freeing each on the heap was a fifth of the reading
/// time), released with the document.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

namespace amaxcheck::fr {

using NodeId = std::uint32_t;
using Items = std::pmr::vector<NodeId>;

enum class Kind : std::uint8_t {
  none,
  boolean,
  integer,      // fits int64
  big_integer,  // does not fit int64 (pickle LONG1/LONG4, JSON numbers past 2^63-1)
  real,
  text,
  list,
  tuple,
  dict,  // items: key, value, key, value, ... (a later duplicate key wins, as in Python)
};

struct Node {
  Kind kind = Kind::none;
  bool truth = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string_view text;
  Items items;
};

/// Python's type name of a node, for messages ("got str").
const char* python_type_name(Kind kind);

class Document {
 public:
  explicit Document(std::string bytes) : bytes_(std::move(bytes)) {}
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  /// The file's bytes (pickle text nodes point into them).
  std::string_view bytes() const { return bytes_; }

  NodeId add(Kind kind) {
    nodes_.push_back(Node{kind, false, 0, 0, {}, Items(&arena_)});
    return static_cast<NodeId>(nodes_.size() - 1);
  }
  NodeId add_text(std::string_view text) {
    const NodeId id = add(Kind::text);
    nodes_[id].text = text;
    return id;
  }
  /// Text that is not in bytes() (JSON strings, unescaped): the document keeps a copy.
  NodeId add_owned_text(std::string text) {
    owned_.push_back(std::move(text));
    return add_text(owned_.back());
  }

  /// An empty item list in the document's arena (moved into a node's items without a copy).
  Items new_items() { return Items(&arena_); }

  Node& operator[](NodeId id) { return nodes_[id]; }
  const Node& operator[](NodeId id) const { return nodes_[id]; }
  std::size_t size() const { return nodes_.size(); }
  void reserve(std::size_t n) { nodes_.reserve(std::min(n, max_reserved)); }
  static constexpr std::size_t max_reserved = std::size_t{1} << 22;

  NodeId root = 0;

 private:
  std::string bytes_;
  std::pmr::monotonic_buffer_resource arena_;  // before nodes_: it outlives them
  std::vector<Node> nodes_;
  std::deque<std::string> owned_;  // a deque: views into it stay valid as it grows
};

}  // namespace amaxcheck::fr
