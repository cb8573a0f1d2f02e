// libFuzzer target: a Flight Recorder dump's bytes through the restricted pickle reader (or the
// JSON reader, when the first byte is '{') and the validator; an accepted dump then goes through
// everything fr-scan does with a job: two ranks (the dump, and a copy that stops halfway, so the
// matching finds divergences), alignment, matching, order inversions, the window and the output,
// which must be one line of valid JSON. A bad dump must end in one of the readers' errors or an
// InputError, never a crash. The readers' bounds (max_nodes, max_json_depth) keep each input's
// time and memory in proportion to its size, and the matching is linear in the records.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "fr/agreement.h"
#include "fr/dump.h"
#include "fr/match_json.h"
#include "fr/readers.h"
#include "fr/window.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace amaxcheck;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  const bool json = !bytes.empty() && bytes[0] == '{';
  try {
    const auto doc = json ? fr::read_json(std::move(bytes)) : fr::read_pickle(std::move(bytes));
    std::vector<fr::Dump> dumps;
    dumps.push_back(fr::validate_dump(*doc, "fuzz_rank_0", 0));
    fr::Dump other = dumps[0];
    other.rank = dumps[0].rank + 1;  // below max_rank + 1: the validator bounds ranks
    other.records.resize(other.records.size() / 2);
    dumps.push_back(std::move(other));
    const fr::Job job(std::move(dumps));
    const fr::Alignment alignment = fr::align(job);
    const auto kernels = static_cast<fr::Kernels>(size % 3);
    const fr::AgreementReport report = fr::check(job, alignment, kernels);
    const fr::ScenarioWindow window = fr::scenario_window(job, alignment, report, 1 + static_cast<std::int64_t>(size % 9));
    const std::string out = fr::match_json(job, alignment, report, window);
    AMAX_CHECK(!out.empty() && out.back() == '\n', "fr-scan's output is one line");
    AMAX_CHECK(nlohmann::json::accept(out), "fr-scan's output is valid JSON");
  } catch (const fr::RefusedInput&) {
  } catch (const fr::BrokenInput&) {
  } catch (const fr::TooDeep&) {
  } catch (const fr::BadText&) {
  } catch (const fr::TooBig&) {
  } catch (const InputError&) {
  }
  return 0;
}
