#include "model/scenario_size.h"

namespace amaxcheck {

ScenarioSize scenario_size(const Scenario& scenario) {
  ScenarioSize size;
  size.ranks = scenario.ranks.size();
  for (const Rank& rank : scenario.ranks) {
    size.actors += rank.threads.size() + rank.streams.size();
    for (const Buffer& buffer : rank.buffers) size.buffer_elements += buffer.size;
    for (const Thread& thread : rank.threads) {
      size.ops += thread.program.size();
      for (const Op& op : thread.program) {
        size.op_values += op.values.size();
        size.ranges += op.reads.size() + op.writes.size();
        for (const Range& range : op.writes) size.written_elements += range.count;
        size.collectives += is_collective(op.kind) ? 1 : 0;
      }
    }
  }
  return size;
}

}  // namespace amaxcheck
