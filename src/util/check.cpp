#include "util/check.h"

#include <fmt/format.h>

namespace amaxcheck {

void check_failed(const char* expr, const char* file, int line, const std::string& why) {
  throw InternalError(fmt::format("internal error: check `{}` failed at {}:{}: {}", expr, file, line, why));
}

}  // namespace amaxcheck
