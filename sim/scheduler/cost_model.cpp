#include "scheduler/cost_model.h"

#include <algorithm>
#include <cmath>

namespace amaxcheck::sched {

double CostModel::issue_us(const Op& op) const { return is_device_op(op.kind) ? launch_overhead_us : 0.0; }

double CostModel::execute_us(const Op& op) const {
  if (op.cost_us > 0) return op.cost_us;
  if (op_kind_info(op.kind).place != OpPlace::stream) return 0.0;  // host ops; collectives: collective_us
  if (!moves_data(op.kind)) return event_op_us;
  switch (op.kind) {
    case OpKind::fill:
    case OpKind::fp8_cast: return kernel_default_us;
    default: return small_kernel_us;  // local_amax, copy, scale_update: memory-light kernels
  }
}

std::uint64_t CostModel::collective_bytes(const Op& op) {
  std::uint64_t elements = 0;
  for (const Range& r : op.reads) elements = std::max<std::uint64_t>(elements, r.count);
  for (const Range& r : op.writes) elements = std::max<std::uint64_t>(elements, r.count);
  const std::uint64_t element_bytes = op.dtype == Dtype::bf16 ? 2 : 4;
  return elements * element_bytes;
}

double CostModel::collective_us(const Op& op, std::size_t members) const {
  if (op.cost_us > 0) return op.cost_us;
  const double m = static_cast<double>(std::max<std::size_t>(members, 1));
  double factor = 1.0;
  if (algo == CollectiveAlgo::tree) {
    factor = std::log2(m);
  } else if (op.kind == OpKind::all_reduce) {
    factor = 2.0 * (m - 1.0) / m;
  } else if (op.kind == OpKind::all_gather || op.kind == OpKind::reduce_scatter) {
    factor = (m - 1.0) / m;
  }
  return alpha_us + beta_us_per_byte * static_cast<double>(collective_bytes(op)) * factor;
}

nlohmann::ordered_json CostModel::to_json() const {
  nlohmann::ordered_json j;
  j["launch_overhead_us"] = launch_overhead_us;
  j["kernel_default_us"] = kernel_default_us;
  j["small_kernel_us"] = small_kernel_us;
  j["event_op_us"] = event_op_us;
  j["alpha_us"] = alpha_us;
  j["beta_us_per_byte"] = beta_us_per_byte;
  j["algo"] = algo == CollectiveAlgo::ring ? "ring" : "tree";
  return j;
}

}  // namespace amaxcheck::sched
