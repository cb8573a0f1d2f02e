#include "cli/junit_xml.h"

#include <fmt/format.h>


#include "util/atomic_file.h"

namespace amaxcheck::cli {
namespace {

/// Escaped for element text (`attribute` also escapes quotes and line breaks, as pytest does).
std::string escape(const std::string& text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += attribute ? "&quot;" : "\""; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\r': out += attribute ? "&#13;" : "\r"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      default:
        // XML 1.0 has no way to write other control characters, not even as references.
        if (u < 0x20 || u == 0x7f) out += fmt::format("#x{:02X}", u);
        else out += c;
    }
  }
  return out;
}

std::string attr(const std::string& text) { return escape(text, true); }

const char* element_of(JunitCase::Outcome outcome) {
  return outcome == JunitCase::Outcome::failure ? "failure" : "error";
}

}  // namespace

std::string junit_xml(const JunitSuite& suite) {
  std::size_t failures = 0, errors = 0;
  double total_s = 0;
  for (const JunitCase& c : suite.cases) {
    failures += c.outcome == JunitCase::Outcome::failure;
    errors += c.outcome == JunitCase::Outcome::error;
    total_s += c.time_s;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\">\n", attr(suite.name));
  out += fmt::format("<testsuite name=\"{}\" errors=\"{}\" failures=\"{}\" skipped=\"0\" tests=\"{}\" time=\"{:.3f}\">\n",
                     attr(suite.name), errors, failures, suite.cases.size(), total_s);
  for (const JunitCase& c : suite.cases) {
    out += fmt::format("<testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">", attr(c.classname), attr(c.name),
                       c.time_s);
    if (c.outcome != JunitCase::Outcome::passed) {
      const char* element = element_of(c.outcome);
      out += fmt::format("<{} message=\"{}\" type=\"{}\">{}</{}>", element, attr(c.message), attr(c.type),
                         escape(c.text, false), element);
    }
    if (!c.system_out.empty()) out += fmt::format("<system-out>{}</system-out>", escape(c.system_out, false));
    out += "</testcase>\n";
  }
  out += "</testsuite>\n</testsuites>\n";
  return out;
}

void write_junit_file(const std::string& path, const JunitSuite& suite) {
  create_parent_folders(path);
  write_file_atomically(path, junit_xml(suite));
}

}  // namespace amaxcheck::cli
