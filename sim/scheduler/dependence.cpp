#include "scheduler/dependence.h"

namespace amaxcheck::sched {

bool touches_conflict(std::span<const Touch> a, std::span<const Touch> b) {
  for (const Touch& x : a) {
    for (const Touch& y : b) {
      if (x.object == y.object && (x.write || y.write)) return true;
    }
  }
  return false;
}

}  // namespace amaxcheck::sched
