#pragma once
// Paths to the files shipped in traces/scenarios (the test environment sets AMAXCHECK_ROOT).
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace amaxcheck::testing {

inline std::string shipped_scenario(const std::string& name) {
  const char* root = std::getenv("AMAXCHECK_ROOT");
  return std::string(root != nullptr ? root : ".") + "/traces/scenarios/" + name;
}

inline nlohmann::json shipped_json(const std::string& name) {
  std::ifstream file(shipped_scenario(name));
  return nlohmann::json::parse(file);
}

}  // namespace amaxcheck::testing
