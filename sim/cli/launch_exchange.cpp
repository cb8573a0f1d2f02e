#include "cli/launch_exchange.h"

#include <utility>

namespace amaxcheck::cli {
namespace {
// Set once by main before any command runs; read by check_on_gpu.
ExchangeFactory& factory() {
  static ExchangeFactory registered;
  return registered;
}
}  // namespace

void set_exchange_factory(ExchangeFactory f) { factory() = std::move(f); }

bool have_exchange_factory() { return static_cast<bool>(factory()); }

std::unique_ptr<gpu::IdExchange> make_launch_exchange() { return factory() ? factory()() : nullptr; }

}  // namespace amaxcheck::cli
