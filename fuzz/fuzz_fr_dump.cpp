// libFuzzer target: a Flight Recorder dump's bytes through the restricted pickle reader (or the
// JSON reader, when the first byte is '{') and the validator. A bad dump must end in one of the
// readers' errors or an InputError, never a crash; an accepted one must print (fr-scan's
// output) without throwing. The readers' bounds (max_nodes, max_json_depth) keep each input's
// time and memory in proportion to its size.
#include <cstdint>
#include <string>

#include "fr/dump.h"
#include "fr/readers.h"
#include "fr/scan_json.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace amaxcheck;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  const bool json = !bytes.empty() && bytes[0] == '{';
  try {
    const auto doc = json ? fr::read_json(std::move(bytes)) : fr::read_pickle(std::move(bytes));
    std::vector<fr::Dump> dumps;
    dumps.push_back(fr::validate_dump(*doc, "fuzz_rank_0", 0));
    const std::string out = fr::scan_json(dumps);
    AMAX_CHECK(!out.empty() && out.back() == '\n', "fr-scan's output is one line per dump");
  } catch (const fr::RefusedInput&) {
  } catch (const fr::BrokenInput&) {
  } catch (const fr::TooDeep&) {
  } catch (const fr::BadText&) {
  } catch (const fr::TooBig&) {
  } catch (const InputError&) {
  }
  return 0;
}
