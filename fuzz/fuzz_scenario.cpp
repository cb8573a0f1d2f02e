// libFuzzer target: the scenario reader and validator (JSON text -> Scenario), then the
// writer: an accepted scenario must write out and read back to the same canonical text.
#include <cstdint>
#include <string>

#include "fuzz_limits.h"
#include "io/json_text.h"
#include "io/scenario_json.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace amaxcheck;
  const std::optional<Scenario> scenario = fuzz::read_scenario(data, size, fuzz::max_read_ops);
  if (!scenario) return 0;
  const std::string text = scenario_to_text(*scenario);
  const Scenario again = scenario_from_json(parse_json_text(text, "rewritten.json"), "rewritten.json");
  AMAX_CHECK(scenario_to_text(again) == text, "a scenario read back from its own text changed");
  return 0;
}
