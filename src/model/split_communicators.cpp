#include "model/split_communicators.h"

#include <fmt/format.h>

#include "util/check.h"

namespace amaxcheck {

Scenario split_communicators_per_rank(const Scenario& scenario) {
  Scenario out = scenario;
  out.comms.clear();
  // new_comm[c][member] = id of the 1-rank communicator of that member.
  std::vector<std::vector<CommId>> new_comm(scenario.comms.size());
  for (CommId c = 0; c < scenario.comms.size(); ++c) {
    const Communicator& comm = scenario.comms[c];
    for (RankId r : comm.members) {
      new_comm[c].push_back(static_cast<CommId>(out.comms.size()));
      const std::string name =
          comm.members.size() == 1 ? comm.name : fmt::format("{}@{}", comm.name, scenario.ranks.at(r).name);
      out.comms.push_back(Communicator{name, {r}});
    }
  }
  for (RankId r = 0; r < out.ranks.size(); ++r) {
    for (Thread& thread : out.ranks[r].threads) {
      for (Op& op : thread.program) {
        if (!is_collective(op.kind)) continue;
        const int member = member_index(scenario.comms.at(op.comm), r);
        if (member < 0) {
          throw InputError(fmt::format("rank {} issues '{}' on comm {} without being a member", r, op.name,
                                       scenario.comms.at(op.comm).name));
        }
        op.comm = new_comm[op.comm][static_cast<std::size_t>(member)];
        op.root = 0;
      }
    }
  }
  // Once collectives are local, replicas no longer agree and the sequential reference no longer
  // applies; each replica stays a check of its own, so the backends still compare every value.
  out.checks.clear();
  for (const ReplicaCheck& check : scenario.checks) {
    for (const ReplicaCheck::Replica& replica : check.replicas) {
      const std::string tensor = check.replicas.size() == 1
                                     ? check.tensor
                                     : fmt::format("{}@{}", check.tensor, scenario.ranks.at(replica.rank).name);
      out.checks.push_back(ReplicaCheck{tensor, {replica}, {}});
    }
  }
  out.name = scenario.name + " (1-rank communicators)";
  return out;
}

}  // namespace amaxcheck
