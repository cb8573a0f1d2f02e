// The JSON reader (readers.h): nlohmann's SAX parser building the Document directly, with a
// nesting limit and the path to the value being read (for the message about a bad string).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "fr/readers.h"

namespace amaxcheck::fr {
namespace {

class Builder : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit Builder(Document& doc) : doc_(doc) {}

  bool null() override { return value(doc_.add(Kind::none)); }
  bool boolean(bool v) override {
    const NodeId id = doc_.add(Kind::boolean);
    doc_[id].truth = v;
    return value(id);
  }
  bool number_integer(number_integer_t v) override {
    const NodeId id = doc_.add(Kind::integer);
    doc_[id].integer = v;
    return value(id);
  }
  bool number_unsigned(number_unsigned_t v) override {
    const NodeId id = doc_.add(Kind::integer);
    if (v > static_cast<number_unsigned_t>(INT64_MAX)) {
      doc_[id].kind = Kind::big_integer;
    } else {
      doc_[id].integer = static_cast<std::int64_t>(v);
    }
    return value(id);
  }
  bool number_float(number_float_t v, const string_t& text) override {
    // nlohmann reads an integer past 2^64 as a float; Python would read an integer.
    const bool integral = text.find_first_of(".eE") == string_t::npos;
    const NodeId id = doc_.add(integral ? Kind::big_integer : Kind::real);
    doc_[id].real = v;
    doc_[id].truth = !text.empty() && text[0] == '-';
    return value(id);
  }
  bool string(string_t& v) override { return value(doc_.add_owned_text(std::move(v))); }
  bool binary(binary_t&) override { return false; }  // not produced by the JSON parser
  bool start_object(std::size_t) override { return open(Kind::dict); }
  bool start_array(std::size_t) override { return open(Kind::list); }
  bool key(string_t& k) override {
    open_.back().key = k;
    const NodeId id = doc_.add_owned_text(std::move(k));  // before indexing: adding may move the nodes
    doc_[open_.back().id].items.push_back(id);
    return budget();
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    const std::string what = ex.what();
    if (what.find("surrogate") != std::string::npos || what.find("UTF-8") != std::string::npos) {
      const std::string reason =
          what.find("surrogate") != std::string::npos ? "a lone surrogate escape" : "ill-formed UTF-8";
      throw BadText(path(), fmt::format("not valid Unicode ({} near byte {})", reason, position));
    }
    const std::size_t colon = what.find("] ");
    throw BrokenInput(colon == std::string::npos ? what : what.substr(colon + 2));
  }

  bool too_deep = false;

 private:
  struct Open {
    NodeId id;
    std::string key;        // objects: the key being read
    std::size_t index = 0;  // arrays: the index being read
  };

  bool budget() {
    if (doc_.size() >= max_nodes) {
      throw TooBig(fmt::format("more than {} values, over the limit for one dump", max_nodes));
    }
    return true;
  }
  bool value(NodeId id) {
    if (open_.empty()) {
      doc_.root = id;
    } else {
      doc_[open_.back().id].items.push_back(id);
      ++open_.back().index;
    }
    return budget();
  }
  bool open(Kind kind) {
    if (open_.size() >= max_json_depth) {
      too_deep = true;
      return false;
    }
    const NodeId id = doc_.add(kind);
    value(id);
    if (!open_.empty()) --open_.back().index;  // counted when it closes
    open_.push_back(Open{id, {}, 0});
    return true;
  }
  bool close() {
    open_.pop_back();
    if (!open_.empty()) ++open_.back().index;
    return true;
  }
  /// Python's spelling of where the parser is: entries[1].profiling_name.
  std::string path() const {
    std::string out;
    for (const Open& o : open_) {
      if (doc_[o.id].kind == Kind::dict) {
        if (!out.empty()) out += '.';
        out += o.key.substr(0, 100);
      } else {
        out += fmt::format("[{}]", o.index);
      }
    }
    return out;
  }

  Document& doc_;
  std::vector<Open> open_;
};

}  // namespace

std::unique_ptr<Document> read_json(std::string bytes) {
  auto doc = std::make_unique<Document>(std::move(bytes));
  Builder builder(*doc);
  const std::string_view text = doc->bytes();
  const bool ok = nlohmann::json::sax_parse(text.begin(), text.end(), &builder);
  if (builder.too_deep) throw TooDeep(fmt::format("nested more than {} deep", max_json_depth));
  if (!ok) throw BrokenInput("the JSON parser stopped");
  return doc;
}

}  // namespace amaxcheck::fr
