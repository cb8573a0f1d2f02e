#include "engine/action.h"

namespace amaxcheck {

std::uint64_t actor_key(const Action& action) {
  // Matches the engine's object keys: a thread, a stream (execute and join), or a comm.
  std::uint64_t type = action.kind == ActionKind::issue ? 1 : action.kind == ActionKind::complete ? 6 : 2;
  const std::uint32_t rank = action.kind == ActionKind::complete ? 0 : action.rank;
  return (type << 56) | (static_cast<std::uint64_t>(rank & 0xFFFFFF) << 32) | action.lane;
}

}  // namespace amaxcheck
