// The restricted pickle reader (readers.h): a pickle machine that knows only plain data. The
// opcodes are those of CPython's Lib/pickle.py; anything else is refused or broken, never run.
#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <unordered_map>

#include "fr/readers.h"

namespace amaxcheck::fr {
namespace {

class PickleMachine {
 public:
  explicit PickleMachine(Document& doc) : doc_(doc), data_(doc.bytes()) {}

  NodeId run() {
    while (true) {
      const std::size_t at = pos_;
      const auto op = static_cast<unsigned char>(take(1)[0]);
      if (op == '.') {  // STOP
        if (stack_.empty()) broken(at, "STOP with an empty stack");
        return stack_.back();
      }
      step(op, at);
    }
  }

 private:
  [[noreturn]] void broken(std::size_t at, const std::string& why) const {
    throw BrokenInput(fmt::format("{} at byte {}", why, at));
  }
  [[noreturn]] static void refused(const std::string& why) { throw RefusedInput(why); }

  std::string_view take(std::size_t n) {
    if (data_.size() - pos_ < n) throw BrokenInput("pickle data was truncated");
    const std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  std::uint64_t little(std::size_t n) {
    const std::string_view b = take(n);
    std::uint64_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[i]);
    return v;
  }
  std::string_view line() {
    const std::size_t end = data_.find('\n', pos_);
    if (end == std::string_view::npos) throw BrokenInput("pickle data was truncated");
    const std::string_view out = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }

  NodeId push(Kind kind) {
    if (doc_.size() >= max_nodes) {
      throw TooBig(fmt::format("more than {} values, over the limit for one dump", max_nodes));
    }
    const NodeId id = doc_.add(kind);
    stack_.push_back(id);
    return id;
  }
  void push_text(std::string_view text) {
    push(Kind::text);
    doc_[stack_.back()].text = text;
  }
  void push_integer(std::int64_t value) { doc_[push(Kind::integer)].integer = value; }
  NodeId pop(std::size_t at) {
    if (stack_.size() <= floor()) broken(at, "stack underflow");
    const NodeId id = stack_.back();
    stack_.pop_back();
    return id;
  }
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  /// The items above the topmost mark, removed with the mark.
  Items pop_mark(std::size_t at) {
    if (marks_.empty()) broken(at, "no MARK before it");
    const std::size_t mark = marks_.back();
    marks_.pop_back();
    Items items = doc_.new_items();
    items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  Node& top_container(std::size_t at, Kind kind, const char* op) {
    if (stack_.size() <= floor()) broken(at, fmt::format("{} with nothing to add to", op));
    Node& node = doc_[stack_.back()];
    if (node.kind != kind) broken(at, fmt::format("{} to a {}", op, python_type_name(node.kind)));
    return node;
  }

  void long_integer(std::size_t n) {
    const std::string_view b = take(n);
    const NodeId id = push(Kind::integer);
    if (n == 0) return;
    const bool negative = (static_cast<unsigned char>(b[n - 1]) & 0x80) != 0;
    // Bytes past the eighth must be pure sign extension for the value to fit int64.
    for (std::size_t i = 8; i < n; ++i) {
      if (static_cast<unsigned char>(b[i]) != (negative ? 0xFF : 0x00)) {
        doc_[id].kind = Kind::big_integer;
        doc_[id].truth = negative;
        return;
      }
    }
    std::uint64_t v = negative ? ~std::uint64_t{0} : 0;
    for (std::size_t i = std::min<std::size_t>(n, 8); i-- > 0;) {
      v = (v << 8) | static_cast<unsigned char>(b[i]);
    }
    const auto value = static_cast<std::int64_t>(v);
    if (n >= 8 && (value < 0) != negative) {  // the sign bit lies beyond int64's
      doc_[id].kind = Kind::big_integer;
      doc_[id].truth = negative;
      return;
    }
    doc_[id].integer = value;
  }

  // Picklers number memo entries 0, 1, 2, ...: a vector holds them. A key far past the count
  // (only a hand-made pickle has one) goes to a map, so it cannot make the vector huge.
  /// INT / LONG: a decimal line ("I01" and "I00" are protocol 0's True and False).
  void text_integer(std::string_view digits, std::size_t at) {
    if (digits == "01" || digits == "00") {
      doc_[push(Kind::boolean)].truth = digits == "01";
      return;
    }
    if (!digits.empty() && digits.back() == 'L') digits.remove_suffix(1);
    const bool negative = !digits.empty() && digits[0] == '-';
    const std::string_view magnitude = digits.substr(negative || (!digits.empty() && digits[0] == '+'));
    if (magnitude.empty() || magnitude.find_first_not_of("0123456789") != std::string_view::npos) {
      broken(at, "an INT that is not a decimal number");
    }
    const NodeId id = push(Kind::integer);
    std::uint64_t v = 0;
    for (char c : magnitude) {
      const auto d = static_cast<std::uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) {
        v = UINT64_MAX;
        break;
      }
      v = v * 10 + d;
    }
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : static_cast<std::uint64_t>(INT64_MAX);
    if (v > limit) {
      doc_[id].kind = Kind::big_integer;
      doc_[id].truth = negative;
    } else {
      doc_[id].integer = negative ? static_cast<std::int64_t>(~v + 1) : static_cast<std::int64_t>(v);
    }
  }

  void memo_put(std::uint64_t index, std::size_t at) {
    if (stack_.size() <= floor()) broken(at, "memo put with an empty stack");
    if (index < memo_.size() + 4096) {
      if (index >= memo_.size()) memo_.resize(index + 1, unset);
      memo_[index] = stack_.back();
    } else {
      far_memo_[index] = stack_.back();
    }
  }
  void memo_get(std::uint64_t index, std::size_t at) {
    NodeId id = unset;
    if (index < memo_.size()) {
      id = memo_[index];
    } else if (const auto it = far_memo_.find(index); it != far_memo_.end()) {
      id = it->second;
    }
    if (id == unset) broken(at, fmt::format("memo key {} not found", index));
    stack_.push_back(id);
  }
  std::uint64_t memo_count() const { return memo_.size() + far_memo_.size(); }
  static constexpr NodeId unset = UINT32_MAX;

  void step(unsigned char op, std::size_t at) {
    switch (op) {
      case 0x80: take(1); return;  // PROTO
      case 0x95: take(8); return;  // FRAME: a length hint only
      case '(': marks_.push_back(stack_.size()); return;
      case '}': push(Kind::dict); return;
      case ']': push(Kind::list); return;
      case ')': push(Kind::tuple); return;
      case 'N': push(Kind::none); return;
      case 0x88: doc_[push(Kind::boolean)].truth = true; return;
      case 0x89: push(Kind::boolean); return;
      case 'J': push_integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(little(4)))); return;
      case 'K': push_integer(static_cast<std::int64_t>(little(1))); return;
      case 'M': push_integer(static_cast<std::int64_t>(little(2))); return;
      case 0x8a: long_integer(static_cast<std::size_t>(little(1))); return;  // LONG1
      case 0x8b: {                                                            // LONG4
        const auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(little(4)));
        if (n < 0) broken(at, "LONG4 with a negative length");
        long_integer(static_cast<std::size_t>(n));
        return;
      }
      case 'G': {  // BINFLOAT: big-endian IEEE 754
        const std::string_view b = take(8);
        std::uint64_t bits = 0;
        for (char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);
        doc_[push(Kind::real)].real = std::bit_cast<double>(bits);
        return;
      }
      case 'X': push_text(take(little(4))); return;    // BINUNICODE
      case 0x8c: push_text(take(little(1))); return;   // SHORT_BINUNICODE
      case 0x8d: push_text(take(little(8))); return;   // BINUNICODE8
      case 'T': push_text(take(little(4))); return;    // BINSTRING: Python 3 reads it as text
      case 'U': push_text(take(little(1))); return;    // SHORT_BINSTRING
      case 0x85: case 0x86: case 0x87: {                // TUPLE1..3
        const std::size_t n = op - 0x84u;
        if (stack_.size() < floor() + n) broken(at, "stack underflow");
        Items items = doc_.new_items();
        items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
        stack_.resize(stack_.size() - n);
        doc_[push(Kind::tuple)].items = std::move(items);
        return;
      }
      case 't': { auto items = pop_mark(at); doc_[push(Kind::tuple)].items = std::move(items); return; }
      case 'l': { auto items = pop_mark(at); doc_[push(Kind::list)].items = std::move(items); return; }
      case 'd': {
        auto items = pop_mark(at);
        if (items.size() % 2) broken(at, "DICT with an odd number of items");
        doc_[push(Kind::dict)].items = std::move(items);
        return;
      }
      case 'a': { const NodeId v = pop(at); top_container(at, Kind::list, "APPEND").items.push_back(v); return; }
      case 'e': {
        auto items = pop_mark(at);
        auto& list = top_container(at, Kind::list, "APPENDS").items;
        list.insert(list.end(), items.begin(), items.end());
        return;
      }
      case 's': {
        const NodeId v = pop(at), k = pop(at);
        auto& dict = top_container(at, Kind::dict, "SETITEM").items;
        dict.push_back(k);
        dict.push_back(v);
        return;
      }
      case 'u': {
        auto items = pop_mark(at);
        if (items.size() % 2) broken(at, "SETITEMS with an odd number of items");
        auto& dict = top_container(at, Kind::dict, "SETITEMS").items;
        dict.insert(dict.end(), items.begin(), items.end());
        return;
      }
      case '0': pop(at); return;          // POP
      case '1': pop_mark(at); return;     // POP_MARK
      case '2': {                         // DUP
        if (stack_.size() <= floor()) broken(at, "DUP with an empty stack");
        stack_.push_back(stack_.back());
        return;
      }
      case 0x94: memo_put(memo_count(), at); return;  // MEMOIZE
      case 'q': memo_put(little(1), at); return;      // BINPUT
      case 'r': memo_put(little(4), at); return;      // LONG_BINPUT
      case 'h': memo_get(little(1), at); return;      // BINGET
      case 'j': memo_get(little(4), at); return;      // LONG_BINGET
      case 'c': case 'i': {                           // GLOBAL, INST
        const std::string_view module = line(), name = line();
        refused(fmt::format("it asks for the global {}.{}", module.substr(0, 100), name.substr(0, 100)));
      }
      case 0x93: {  // STACK_GLOBAL
        std::string what = "a global";
        if (stack_.size() >= 2 && doc_[stack_.end()[-2]].kind == Kind::text && doc_[stack_.back()].kind == Kind::text) {
          what = fmt::format("the global {}.{}", doc_[stack_.end()[-2]].text.substr(0, 100),
                             doc_[stack_.back()].text.substr(0, 100));
        }
        refused("it asks for " + what);
      }
      case 0x82: case 0x83: case 0x84: refused("it asks for a global of the extension registry");
      case 'o': case 'R': case 0x81: case 0x92: case 'b':
        refused(fmt::format("it calls an object (opcode {:?})", static_cast<char>(op)));
      case 'P': case 'Q': refused("it uses a persistent id");
      case 'B': case 'C': case 0x8e: case 0x96: case 0x97: case 0x98:
        refused("it holds a bytes, which is not plain data");
      case 0x8f: case 0x90: case 0x91: refused("it holds a set, which is not plain data");
      case 'I': case 'L': text_integer(line(), at); return;  // protocol 1 writes ints past 2^31 so
      case 'S': case 'V': case 'F': case 'p': case 'g':
        broken(at, fmt::format("opcode {:?} of the text protocol 0 (PyTorch writes protocol 2)", static_cast<char>(op)));
      default: broken(at, fmt::format("unknown opcode 0x{:02x}", op));
    }
  }

  Document& doc_;
  std::string_view data_;
  std::size_t pos_ = 0;
  std::vector<NodeId> stack_;
  std::vector<std::size_t> marks_;
  std::vector<NodeId> memo_;
  std::unordered_map<std::uint64_t, NodeId> far_memo_;
};

}  // namespace

std::unique_ptr<Document> read_pickle(std::string bytes) {
  auto doc = std::make_unique<Document>(std::move(bytes));
  doc->reserve(doc->bytes().size() / 8);  // a value takes 5 to 20 bytes of a dump's pickle
  doc->root = PickleMachine(*doc).run();
  return doc;
}

}  // namespace amaxcheck::fr
