// build_protocol: validate the knobs, generate the programs, attach the reference checks.
#include <fmt/format.h>

#include "protocols/generator.h"
#include "protocols/layout.h"
#include "protocols/reference_model.h"
#include "protocols/schedule.h"
#include "protocols/sharing.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

const char* quantity_name(int q) {
  static constexpr const char* names[] = {"amax_history", "scale", "scale_inv"};
  return names[q];
}

const std::vector<float>& quantity_of(const ReferenceTensors& tensors, int q) {
  return q == 0 ? tensors.amax_history : q == 1 ? tensors.scale : tensors.scale_inv;
}

BufferId find_buffer(const Rank& rank, const std::string& name) {
  for (std::size_t b = 0; b < rank.buffers.size(); ++b) {
    if (rank.buffers[b].name == name) return static_cast<BufferId>(b);
  }
  throw InternalError("generated rank has no buffer " + name);
}

/// Whether each stage holds more than one of `groups` (its checks then name their ranks).
std::vector<bool> shared_stages(const Groups& groups, const Layout& layout, std::uint32_t stages) {
  std::vector<std::uint32_t> count(stages, 0);
  for (const auto& group : groups) ++count[layout.stage(group.front())];
  std::vector<bool> several(stages);
  for (std::uint32_t s = 0; s < stages; ++s) several[s] = count[s] > 1;
  return several;
}

/// A check named "stage S / module M / <what>" (and " / ranks A,B" when `several`) over the whole
/// of buffer `buffer` on every holder; no expected values yet.
ReplicaCheck check_over(const Scenario& scenario, const std::vector<RankId>& holders, std::uint32_t stage, std::uint32_t m,
                        bool several, const std::string& what, const std::string& buffer) {
  ReplicaCheck check;
  check.tensor = fmt::format("stage {} / module {} / {}", stage, m, what);
  if (several) check.tensor += fmt::format(" / ranks {}", fmt::join(holders, ","));
  for (RankId r : holders) {
    const Rank& rank = scenario.ranks[r];
    const BufferId b = find_buffer(rank, buffer);
    check.replicas.push_back({r, Range{b, 0, rank.buffers[b].size}});
  }
  return check;
}

/// One check per (sharing group, module, direction, quantity): the ranks that hold replicas
/// or shards of the tensor (sharing.h), which must end bit-identical, whatever group the design
/// reduces over. Expected values come from the reference model when it defines them and they
/// agree across the replicas (a rank that skipped a module legitimately lags; its replicas are
/// then only checked for agreement, which is exactly what breaks).
void add_checks(Scenario& scenario, const ProtocolKnobs& knobs, const Layout& layout, const ReferenceResult& ref) {
  const Groups groups = sharing_groups(layout, knobs.protocol);
  const std::vector<bool> several = shared_stages(groups, layout, knobs.pp);
  for (const auto& holders : groups) {
    const std::uint32_t stage = layout.stage(holders.front());
    for (std::uint32_t m = 0; m < stage_module_count(knobs, stage); ++m) {
      for (Direction dir : {Direction::forward, Direction::backward}) {
        for (int q = 0; q < 3; ++q) {
          ReplicaCheck check =
              check_over(scenario, holders, stage, m, several[stage], fmt::format("{} / {}", to_string(dir), quantity_name(q)),
                         fmt::format("m{}.{}.{}", m, dir == Direction::forward ? "fwd" : "bwd", quantity_name(q)));
          bool agree = true;
          for (RankId r : holders) {
            const ReferenceTensors& mine = ref.at(r, dir, m);
            const ReferenceTensors& first = ref.at(holders.front(), dir, m);
            agree = agree && mine.defined && quantity_of(mine, q) == quantity_of(first, q);
          }
          if (agree) check.expected = quantity_of(ref.at(holders.front(), dir, m), q);
          scenario.checks.push_back(std::move(check));
        }
      }
    }
  }
}

/// --sp-gather fp8: one check per (TP group, module, direction) of the gathered tensor 0, which
/// every TP peer must hold bit-identical (the all-gather gives them the same bytes; the scale_inv
/// they read them with must agree too). Expected: the peers' reference casts in TP order and the
/// reference scale_inv, when the reference defines them and they agree.
void add_sp_gather_checks(Scenario& scenario, const ProtocolKnobs& knobs, const Layout& layout, const ReferenceResult& ref) {
  if (knobs.sp_gather != SpGather::fp8) return;
  const Groups groups = layout.partition({Dim::tp});
  const std::vector<bool> several = shared_stages(groups, layout, knobs.pp);
  for (const auto& holders : groups) {
    const std::uint32_t stage = layout.stage(holders.front());
    for (std::uint32_t m = 0; m < stage_module_count(knobs, stage); ++m) {
      for (Direction dir : {Direction::forward, Direction::backward}) {
        ReplicaCheck check = check_over(scenario, holders, stage, m, several[stage], fmt::format("{} / sp_gathered", to_string(dir)),
                                        fmt::format("m{}.{}.sp_gathered", m, dir == Direction::forward ? "fwd" : "bwd"));
        const ReferenceCast& first = ref.cast(holders.front(), dir, m);
        std::vector<float> expected;
        bool agree = true;
        for (RankId r : holders) {
          const ReferenceCast& mine = ref.cast(r, dir, m);
          agree = agree && ref.at(r, dir, m).defined && !mine.values.empty() && mine.scale_inv == first.scale_inv;
          expected.insert(expected.end(), mine.values.begin(), mine.values.end());
        }
        expected.push_back(first.scale_inv);
        if (agree) check.expected = std::move(expected);
        scenario.checks.push_back(std::move(check));
      }
    }
  }
}

/// --fsdp: per (FSDP group, module) the weight's scale, scale_inv and gathered FP8 weight, which
/// every member must hold bit-identical, expected from the reference.
void add_fsdp_checks(Scenario& scenario, const ProtocolKnobs& knobs, const Layout& layout, const ReferenceResult& ref) {
  if (knobs.fsdp == FsdpMode::off) return;
  const Groups groups = layout.partition({Dim::cp, Dim::dp});
  const std::vector<bool> several = shared_stages(groups, layout, knobs.pp);
  for (const auto& holders : groups) {
    const std::uint32_t stage = layout.stage(holders.front());
    for (std::uint32_t m = 0; m < stage_module_count(knobs, stage); ++m) {
      const ReferenceWeight& first = ref.weight(holders.front(), m);
      std::vector<float> gathered;
      for (RankId r : holders) gathered.insert(gathered.end(), ref.weight(r, m).shard_fp8.begin(), ref.weight(r, m).shard_fp8.end());
      gathered.push_back(first.scale_inv);
      const std::pair<const char*, std::vector<float>> quantities[] = {
          {"scale", {first.scale}}, {"scale_inv", {first.scale_inv}}, {"fsdp_gathered", gathered}};
      for (const auto& [quantity, expected] : quantities) {
        ReplicaCheck check = check_over(scenario, holders, stage, m, several[stage], fmt::format("weight / {}", quantity),
                                        fmt::format("m{}.weight.{}", m, quantity));
        check.expected = expected;
        scenario.checks.push_back(std::move(check));
      }
    }
  }
}

}  // namespace

const char* to_string(ProtocolName protocol) { return enum_name(protocol); }

const char* to_string(Direction dir) { return enum_name(dir); }

std::vector<ProtocolDoc> protocol_docs() {
  return {
      {"te-sync",
       "delayed scaling; synchronous amax all-reduce at autocast exit, the backward reduction after the last module "
       "to run backward (TransformerEngine v1.6+'s placement, --reduce-at-bwd); slots per autocast by default "
       "(--registration dynamic, as before v1.6; v1.6+'s global buffer is --registration static)"},
      {"te-async",
       "delayed scaling; asynchronous amax all-reduce whose handle the first module of the next autocast waits on "
       "(--wait before-copy|after-copy for the forward, --wait-bwd for the backward); separate forward and backward "
       "handles; the backward reduction at the end of the forward's first module's backward (TransformerEngine "
       "v0.8-v1.5, --reduce-at-bwd)"},
      {"current-scaling",
       "an inline amax all-reduce and wait for every quantization, over the TP group by default"},
  };
}

std::optional<ProtocolName> parse_protocol(const std::string& name) { return parse_enum<ProtocolName>(name); }

Scenario build_protocol(const ProtocolKnobs& knobs) {
  validate_knobs(knobs);
  ProgramGenerator generator(knobs);
  Scenario scenario = generator.build();
  const std::string line = command_line(knobs);
  scenario.source = line;
  scenario.name = line.substr(std::string("amaxcheck check ").size());
  const Layout layout(knobs);
  const ReferenceResult ref = run_reference_model(knobs);
  add_checks(scenario, knobs, layout, ref);
  add_sp_gather_checks(scenario, knobs, layout, ref);
  add_fsdp_checks(scenario, knobs, layout, ref);
  return scenario;
}

}  // namespace amaxcheck
