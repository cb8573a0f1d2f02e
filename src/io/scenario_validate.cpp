#include "io/scenario_validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "util/check.h"

namespace amaxcheck {
namespace {

class Validator {
 public:
  Validator(const Scenario& s, const std::string& where, const std::vector<std::string>& rank_paths)
      : s_(s), where_(where), rank_paths_(rank_paths) {}

  void run() {
    if (s_.ranks.empty()) fail("ranks", "expected at least one rank");
    for (std::size_t c = 0; c < s_.comms.size(); ++c) comm(c);
    for (std::size_t r = 0; r < s_.ranks.size(); ++r) rank(static_cast<RankId>(r));
    for (std::size_t c = 0; c < s_.checks.size(); ++c) check(c);
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", where_, path, what));
  }

  template <typename Names>
  void unique_names(const Names& names, const std::string& path, const char* what) const {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!names[i].empty() && !seen.insert(names[i]).second) {
        fail(fmt::format("{}[{}]", path, i), fmt::format("duplicate {} name \"{}\"; names must be unique", what, names[i]));
      }
    }
  }

  void comm(std::size_t c) const {
    const Communicator& comm = s_.comms[c];
    const std::string path = fmt::format("comms[{}].members", c);
    if (comm.members.empty()) fail(path, "expected at least one member rank");
    std::set<RankId> seen;
    for (std::size_t i = 0; i < comm.members.size(); ++i) {
      const RankId r = comm.members[i];
      if (r >= s_.ranks.size()) {
        fail(fmt::format("{}[{}]", path, i), fmt::format("rank {} out of range (the scenario has {} ranks)", r, s_.ranks.size()));
      }
      if (!seen.insert(r).second) fail(fmt::format("{}[{}]", path, i), fmt::format("rank {} appears twice in the communicator", r));
    }
  }

  void range(const Rank& rank, const Range& range, const std::string& path) const {
    if (range.buffer >= rank.buffers.size()) {
      fail(path + ".buffer", fmt::format("buffer {} out of range (the rank has {} buffers)", range.buffer, rank.buffers.size()));
    }
    const Buffer& buffer = rank.buffers[range.buffer];
    if (std::uint64_t{range.offset} + range.count > buffer.size) {
      fail(path, fmt::format("range [{}, {}) runs past the end of buffer \"{}\" (size {})", range.offset,
                             std::uint64_t{range.offset} + range.count, buffer.name, buffer.size));
    }
  }

  void rank(RankId r) const {
    const Rank& rank = s_.ranks[r];
    const std::string path = r < rank_paths_.size() ? rank_paths_[r] : fmt::format("ranks[{}]", r);
    std::vector<std::string> names;
    for (const auto& t : rank.threads) names.push_back(t.name);
    unique_names(names, path + ".threads", "thread");
    names.clear();
    for (const auto& t : rank.streams) names.push_back(t.name);
    unique_names(names, path + ".streams", "stream");
    names.clear();
    for (const auto& t : rank.events) names.push_back(t.name);
    unique_names(names, path + ".events", "event");
    names.clear();
    for (const auto& t : rank.buffers) names.push_back(t.name);
    unique_names(names, path + ".buffers", "buffer");
    unique_names(rank.flags, path + ".flags", "flag");
    for (std::size_t b = 0; b < rank.buffers.size(); ++b) {
      const Buffer& buffer = rank.buffers[b];
      if (!buffer.init.empty() && buffer.init.size() != buffer.size) {
        fail(fmt::format("{}.buffers[{}].init", path, b),
             fmt::format("expected {} values (the buffer's size) or none, got {}", buffer.size, buffer.init.size()));
      }
    }
    for (std::size_t t = 0; t < rank.threads.size(); ++t) {
      for (std::size_t i = 0; i < rank.threads[t].program.size(); ++i) {
        op(r, rank.threads[t].program[i], fmt::format("{}.threads[{}].program[{}]", path, t, i));
      }
      groups(rank.threads[t].program, fmt::format("{}.threads[{}].program", path, t));
    }
  }

  /// A send/recv group is one run of consecutive p2p ops of a thread, on one stream and comm.
  void groups(const std::vector<Op>& program, const std::string& path) const {
    std::set<std::uint32_t> closed;
    for (std::size_t i = 0; i < program.size(); ++i) {
      const Op& op = program[i];
      if (op.group == 0) continue;
      const std::string at = fmt::format("{}[{}].group", path, i);
      if (!is_p2p(op.kind)) fail(at, fmt::format("only send and recv ops can be grouped, not {}", to_string(op.kind)));
      const bool continues = i > 0 && program[i - 1].group == op.group;
      if (!continues && !closed.insert(op.group).second) {
        fail(at, fmt::format("group {} was used earlier in this thread; a group's ops must be consecutive", op.group));
      }
      if (continues && (program[i - 1].stream != op.stream || program[i - 1].comm != op.comm)) {
        fail(at, fmt::format("group {} mixes streams or communicators; one ncclGroup launch runs on one stream and comm", op.group));
      }
    }
  }

  void arity(const Op& op, std::size_t reads, std::size_t writes, const std::string& path) const {
    if (op.reads.size() != reads) {
      fail(path + ".reads", fmt::format("{} expects {} read range(s), got {}", to_string(op.kind), reads, op.reads.size()));
    }
    if (op.writes.size() != writes) {
      fail(path + ".writes", fmt::format("{} expects {} write range(s), got {}", to_string(op.kind), writes, op.writes.size()));
    }
  }

  void count(const Range& range, std::uint64_t expected, const std::string& path, const std::string& why) const {
    if (range.count != expected) fail(path + ".count", fmt::format("expected {} ({}), got {}", expected, why, range.count));
  }

  void op(RankId r, const Op& op, const std::string& path) const {
    const Rank& rank = s_.ranks[r];
    if (has_field(op.kind, field_stream) && op.stream >= rank.streams.size()) {
      fail(path + ".stream", fmt::format("stream {} out of range (the rank has {} streams)", op.stream, rank.streams.size()));
    }
    if (has_event(op.kind) && op.event >= rank.events.size()) {
      fail(path + ".event", fmt::format("event {} out of range (the rank has {} events)", op.event, rank.events.size()));
    }
    if (has_field(op.kind, field_flag) && op.flag >= rank.flags.size()) {
      fail(path + ".flag", fmt::format("flag {} out of range (the rank has {} flags)", op.flag, rank.flags.size()));
    }
    if (op.kind == OpKind::host_wait && op.count == 0) fail(path + ".count", "expected a signal count of at least 1");
    for (std::size_t i = 0; i < op.reads.size(); ++i) range(rank, op.reads[i], fmt::format("{}.reads[{}]", path, i));
    for (std::size_t i = 0; i < op.writes.size(); ++i) range(rank, op.writes[i], fmt::format("{}.writes[{}]", path, i));

    std::size_t members = 0;
    if (is_comm_op(op.kind)) {
      if (op.comm >= s_.comms.size()) {
        fail(path + ".comm", fmt::format("communicator {} out of range (the scenario has {} communicators)", op.comm,
                                         s_.comms.size()));
      }
      const Communicator& comm = s_.comms[op.comm];
      if (member_index(comm, r) < 0) {
        fail(path + ".comm", fmt::format("rank {} is not a member of communicator \"{}\"", r, comm.name));
      }
      members = comm.members.size();
    }
    const OpKindInfo& info = op_kind_info(op.kind);
    if (info.reads != any_ranges) arity(op, static_cast<std::size_t>(info.reads), static_cast<std::size_t>(info.writes), path);
    switch (op.kind) {
      case OpKind::fill:
        if (op.values.size() != op.writes[0].count) {
          fail(path + ".values", fmt::format("expected {} values (the write range's count), got {}", op.writes[0].count,
                                             op.values.size()));
        }
        break;
      case OpKind::local_amax:
        count(op.writes[0], 1, path + ".writes[0]", "local_amax writes one value");
        break;
      case OpKind::fp8_cast:
        count(op.reads[1], 1, path + ".reads[1]", "the scale is one value");
        count(op.writes[0], op.reads[0].count, path + ".writes[0]", "the input's count");
        break;
      case OpKind::copy:
        if (op.reads.empty() || op.reads.size() != op.writes.size()) {
          fail(path + ".writes", fmt::format("copy expects as many write ranges as read ranges (at least one), got {} and {}",
                                             op.reads.size(), op.writes.size()));
        }
        for (std::size_t i = 0; i < op.reads.size(); ++i) {
          count(op.writes[i], op.reads[i].count, fmt::format("{}.writes[{}]", path, i), "the matching read's count");
        }
        break;
      case OpKind::scale_update: {
        if (op.scale.history_len == 0) fail(path + ".scale.history_len", "expected a history length of at least 1");
        const std::uint64_t history = std::uint64_t{op.scale.tensors} * op.scale.history_len;
        count(op.reads[0], history, path + ".reads[0]", "history_len x tensors");
        count(op.reads[1], op.scale.tensors, path + ".reads[1]", "one scale per tensor");
        count(op.writes[0], history, path + ".writes[0]", "history_len x tensors");
        count(op.writes[1], op.scale.tensors, path + ".writes[1]", "one scale per tensor");
        count(op.writes[2], op.scale.tensors, path + ".writes[2]", "one scale_inv per tensor");
        break;
      }
      case OpKind::all_reduce:
      case OpKind::broadcast:
        count(op.writes[0], op.reads[0].count, path + ".writes[0]", "the input's count");
        if (has_root(op.kind) && op.root >= members) {
          fail(path + ".root", fmt::format("root member {} out of range (the communicator has {} members)", op.root, members));
        }
        break;
      case OpKind::send:
      case OpKind::recv:
        if (op.peer >= members) {
          fail(path + ".peer", fmt::format("peer member {} out of range (the communicator has {} members)", op.peer, members));
        }
        break;
      case OpKind::all_gather:
        count(op.writes[0], std::uint64_t{op.reads[0].count} * members, path + ".writes[0]", "input count x members");
        break;
      case OpKind::reduce_scatter:
        count(op.reads[0], std::uint64_t{op.writes[0].count} * members, path + ".reads[0]", "output count x members");
        break;
      default:
        break;  // no ranges to size (the arity above checked there are none)
    }
  }

  void check(std::size_t c) const {
    const ReplicaCheck& check = s_.checks[c];
    const std::string path = fmt::format("checks[{}]", c);
    if (check.replicas.empty()) fail(path + ".replicas", "expected at least one replica");
    for (std::size_t i = 0; i < check.replicas.size(); ++i) {
      const auto& replica = check.replicas[i];
      const std::string at = fmt::format("{}.replicas[{}]", path, i);
      if (replica.rank >= s_.ranks.size()) {
        fail(at + ".rank", fmt::format("rank {} out of range (the scenario has {} ranks)", replica.rank, s_.ranks.size()));
      }
      range(s_.ranks[replica.rank], replica.range, at);
      if (replica.range.count != check.replicas[0].range.count) {
        fail(at + ".count", fmt::format("expected {} (every replica has the first one's count), got {}",
                                        check.replicas[0].range.count, replica.range.count));
      }
    }
    if (!check.expected.empty() && check.expected.size() != check.replicas[0].range.count) {
      fail(path + ".expected", fmt::format("expected {} values (the replicas' count) or none, got {}",
                                           check.replicas[0].range.count, check.expected.size()));
    }
  }

  const Scenario& s_;
  const std::string& where_;
  const std::vector<std::string>& rank_paths_;
};

}  // namespace

void validate_scenario(const Scenario& scenario, const std::string& where, const std::vector<std::string>& rank_paths) {
  Validator(scenario, where, rank_paths).run();
}

}  // namespace amaxcheck
