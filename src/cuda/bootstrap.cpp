#include "cuda/bootstrap.h"

namespace amaxcheck::gpu {

std::vector<UniqueIdBytes> share_unique_ids(IdExchange& exchange, std::size_t count,
                                            const std::function<UniqueIdBytes()>& make_id) {
  std::vector<UniqueIdBytes> ids(count);
  if (exchange.rank() == 0) {
    for (auto& id : ids) id = make_id();
  }
  // One message for all ids: the root's bytes land in every process's vector.
  if (count > 0) exchange.broadcast(ids.data(), count * unique_id_bytes, 0);
  return ids;
}

std::vector<bool> share_flags(IdExchange& exchange, bool ok) {
  std::vector<bool> flags(static_cast<std::size_t>(exchange.size()));
  for (int root = 0; root < exchange.size(); ++root) {
    char flag = root == exchange.rank() && ok ? 1 : 0;
    exchange.broadcast(&flag, 1, root);
    flags[static_cast<std::size_t>(root)] = root == exchange.rank() ? ok : flag != 0;
  }
  return flags;
}

}  // namespace amaxcheck::gpu
