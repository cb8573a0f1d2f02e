// `amaxcheck protocols`: the built-in protocols, every knob with its default, and the framework
// variants the knobs select with where they shipped and what they are reported with.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "protocols/protocol.h"
#include "protocols/variant_docs.h"

namespace amaxcheck::cli {
namespace {

struct ProtocolsOptions {
  bool json = false;
};

int list_protocols(const ProtocolsOptions& options) {
  const auto protocols = protocol_docs();
  const auto knobs = knob_docs();
  if (options.json) {
    nlohmann::json doc;
    for (const ProtocolDoc& p : protocols) doc["protocols"].push_back({{"name", p.name}, {"summary", p.summary}});
    for (const KnobDoc& k : knobs) {
      doc["knobs"].push_back({{"name", k.name},
                              {"default", k.default_value},
                              {"values", k.values},
                              {"help", k.help},
                              {"flag", k.flag},
                              {"repeatable", k.repeatable}});
      if (!k.choices.empty()) doc["knobs"].back()["choices"] = k.choices;
    }
    for (const VariantDoc& v : variant_docs()) {
      doc["variants"].push_back({{"knob", v.knob}, {"value", v.value}, {"shipped", v.shipped}, {"hazard", v.hazard}});
    }
    fmt::print("{}\n", doc.dump(2));
    return exit_clean;
  }
  fmt::print("Protocols (amaxcheck check <protocol> [--knob value ...]):\n");
  for (const ProtocolDoc& p : protocols) fmt::print("  {:<16} {}\n", p.name, p.summary);
  fmt::print("\nKnobs (every protocol takes them; the same names work as \"knobs\" in a scenario file):\n");
  std::size_t width = 0;
  for (const KnobDoc& k : knobs) width = std::max(width, k.name.size() + k.values.size() + 3);
  for (const KnobDoc& k : knobs) {
    const std::string usage = k.flag ? "--" + k.name : fmt::format("--{} {}", k.name, k.values);
    fmt::print("  {:<{}}  default {:<12} {}{}\n", usage, width + 2, k.default_value, k.help,
               k.repeatable ? " [repeatable]" : "");
  }
  fmt::print("\nFramework variants (--knob value: where it shipped; what amaxcheck reports):\n");
  for (const VariantDoc& v : variant_docs()) {
    fmt::print("  --{} {}: {}; {}\n", v.knob, v.value, v.shipped, v.hazard.empty() ? "clean" : v.hazard);
  }
  fmt::print("\nExample: amaxcheck check te-async --comm shared --wait after-copy --dp 8 --modules 4\n");
  return exit_clean;
}

}  // namespace

void register_protocols(CLI::App& app) {
  static ProtocolsOptions options;
  CLI::App* sub = app.add_subcommand("protocols", "List the built-in protocols and their knobs with defaults");
  sub->add_flag("--json", options.json, "machine-readable output");
  add_command(app, sub, [] { return list_protocols(options); });
}

}  // namespace amaxcheck::cli
