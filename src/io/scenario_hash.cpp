#include "io/scenario_hash.h"

#include <fmt/format.h>

#include <cstdint>

#include "io/scenario_json.h"

namespace amaxcheck {

std::string scenario_hash(const Scenario& scenario) {
  nlohmann::json canonical = scenario_to_json(scenario, false);
  canonical.erase("source");
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : canonical.dump()) {
    hash ^= static_cast<std::uint8_t>(c);
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("fnv1a64:{:016x}", hash);
}

}  // namespace amaxcheck
