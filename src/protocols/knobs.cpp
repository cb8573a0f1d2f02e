// The knob table: one entry per knob, with its documentation, its parser and its printer.
// set_knob, knob_docs, knob_args and add_knob_options (sim/cli/knob_options.cpp) all read this table,
// so the command line, scenario files and `amaxcheck protocols` can never disagree.
#include "protocols/knob_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "protocols/knob_values.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

using knobs::Parsed;

/// Unwraps a parsed value into `out`, or returns the parse error.
template <typename T, typename Out>
std::optional<std::string> assign(const Parsed<T>& parsed, Out& out) {
  if (const auto* error = std::get_if<std::string>(&parsed)) return *error;
  out = static_cast<Out>(std::get<T>(parsed));
  return std::nullopt;
}

KnobEntry uint_knob(std::string name, std::uint32_t ProtocolKnobs::*field, std::uint64_t min,
                    std::uint64_t max, std::string help) {
  KnobEntry entry;
  entry.doc = {name, "", fmt::format("{}..{}", min, max), std::move(help)};
  entry.set = [field, min, max](ProtocolKnobs& k, const std::string& v) {
    return assign(knobs::parse_uint(v, min, max), k.*field);
  };
  entry.show = [field](const ProtocolKnobs& k) { return std::vector<std::string>{fmt::format("{}", k.*field)}; };
  return entry;
}

/// A knob whose value is one of the enum's names (its EnumNames table).
template <typename Enum>
KnobEntry choice_knob(std::string name, Enum ProtocolKnobs::*field, std::string help) {
  KnobEntry entry;
  entry.doc = {name, "", enum_name_list<Enum>("|"), std::move(help)};
  for (const auto& choice : EnumNames<Enum>::table) entry.doc.choices.emplace_back(choice.name);
  entry.set = [field](ProtocolKnobs& k, const std::string& v) -> std::optional<std::string> {
    if (auto value = parse_enum<Enum>(v)) {
      k.*field = *value;
      return std::nullopt;
    }
    return fmt::format("expected {}, got \"{}\"", enum_name_list<Enum>("|"), v);
  };
  entry.show = [field](const ProtocolKnobs& k) { return std::vector<std::string>{enum_name(k.*field)}; };
  return entry;
}

/// A repeatable knob: each value parses into one rule appended to `field`.
template <typename Rule>
KnobEntry rule_knob(std::string name, std::vector<Rule> ProtocolKnobs::*field,
                    Parsed<Rule> (*parse)(const std::string&), std::string values, std::string help) {
  KnobEntry entry;
  entry.doc = {name, "", std::move(values), std::move(help), false, true};
  entry.set = [field, parse](ProtocolKnobs& k, const std::string& v) -> std::optional<std::string> {
    auto parsed = parse(v);
    if (const auto* error = std::get_if<std::string>(&parsed)) return *error;
    (k.*field).push_back(std::get<Rule>(parsed));
    return std::nullopt;
  };
  entry.show = [field](const ProtocolKnobs& k) {
    std::vector<std::string> shown;
    for (const Rule& rule : k.*field) shown.push_back(knobs::show(rule));
    return shown;
  };
  return entry;
}

std::vector<KnobEntry> make_table() {
  std::vector<KnobEntry> table;
  table.push_back(choice_knob("comm", &ProtocolKnobs::comm,
                              "amax reduction on the DP communicator that also carries the gradient "
                              "buckets, or on a communicator of its own over the same ranks"));
  table.push_back(choice_knob("wait", &ProtocolKnobs::wait,
                              "te-async: where the first module of the next forward waits on the "
                              "forward reduction handle, relative to its copy-back from the global buffer "
                              "(after-copy is the historical TE release, which moved only the forward wait)"));
  table.push_back(choice_knob("wait-bwd", &ProtocolKnobs::wait_bwd,
                              "te-async: the same for the backward: where the first module of the next "
                              "backward waits on the backward reduction handle"));
  table.push_back(choice_knob("amax-order", &ProtocolKnobs::amax_order,
                              "delayed scaling: where the backward amax reduction is launched relative "
                              "to the last gradient bucket (rank-dependent: even members of each DP group before, odd ones after)"));
  table.push_back(uint_knob("dp", &ProtocolKnobs::dp, 1, kMaxWorld, "data-parallel size"));
  table.push_back(uint_knob("tp", &ProtocolKnobs::tp, 1, kMaxWorld, "tensor-parallel size"));
  table.push_back(uint_knob("pp", &ProtocolKnobs::pp, 1, kMaxWorld, "pipeline-parallel size (stages run --pp-schedule)"));
  table.push_back(uint_knob("cp", &ProtocolKnobs::cp, 1, kMaxWorld, "context-parallel size"));
  {
    KnobEntry order;
    order.doc = {"order", "", "permutation of tp-cp-dp-pp", "rank ordering, fastest-varying dimension first"};
    order.set = [](ProtocolKnobs& k, const std::string& v) { return assign(knobs::parse_order(v), k.order); };
    order.show = [](const ProtocolKnobs& k) { return std::vector<std::string>{knobs::show_order(k.order)}; };
    table.push_back(std::move(order));
  }
  table.push_back(uint_knob("ranks-per-node", &ProtocolKnobs::ranks_per_node, 1, 1024,
                            "GPUs per node; a rank's device is its local rank"));
  table.push_back(uint_knob("modules", &ProtocolKnobs::modules, 1, 256, "FP8 modules per pipeline stage"));
  {
    KnobEntry stages;
    stages.doc = {"stage-modules", "", "same|N,N,...",
                  "FP8 modules of each pipeline stage, one count per stage (same: --modules in every stage)"};
    stages.set = [](ProtocolKnobs& k, const std::string& v) { return assign(knobs::parse_uint_list(v, 1, 256), k.stage_modules); };
    stages.show = [](const ProtocolKnobs& k) {
      return std::vector<std::string>{k.stage_modules.empty() ? "same" : fmt::format("{}", fmt::join(k.stage_modules, ","))};
    };
    table.push_back(std::move(stages));
  }
  table.push_back(choice_knob("pp-schedule", &ProtocolKnobs::pp_schedule,
                              "pp > 1: the pipeline schedule; stages send activations forward and gradients "
                              "backward (send/recv on the pipeline group). 1f1b: Megatron-LM's default (warm-up, "
                              "one forward one backward, cool-down); gpipe: every forward, then every backward; "
                              "independent: stages do not communicate"));
  table.push_back(uint_knob("microbatches", &ProtocolKnobs::microbatches, 1, 64,
                            "autocasts (forward + backward) per iteration; gradients reduce on the last"));
  table.push_back(uint_knob("iters", &ProtocolKnobs::iters, 1, 1024, "training iterations"));
  table.push_back(uint_knob("history", &ProtocolKnobs::history, 1, 4096, "amax history length (delayed scaling)"));
  table.push_back(choice_knob("algo", &ProtocolKnobs::algo,
                              "amax from the history window: its max, or the most recent row"));
  {
    KnobEntry margin;
    margin.doc = {"margin", "", "-64..64", "scale = (fp8_max / amax) / 2^margin"};
    margin.set = [](ProtocolKnobs& k, const std::string& v) { return assign(knobs::parse_int(v, -64, 64), k.margin); };
    margin.show = [](const ProtocolKnobs& k) { return std::vector<std::string>{fmt::format("{}", k.margin)}; };
    table.push_back(std::move(margin));
  }
  table.push_back(choice_knob("kernels", &ProtocolKnobs::kernels,
                              "collective kernel concurrency: one collective kernel at a time per device "
                              "(NCCL < 2.26), or kernels of different communicators may overlap"));
  {
    KnobEntry group;
    group.doc = {"group", "", "auto|dp|tp|tp-dp|world|0,1,2-3/4-7",
                 "amax reduction group: dp = DP x CP, tp = the TP group alone, tp-dp = TP x CP x DP within a "
                 "stage; auto = tp-dp for delayed scaling, tp for current scaling; explicit lists must "
                 "partition the ranks"};
    group.set = [](ProtocolKnobs& k, const std::string& v) -> std::optional<std::string> {
      auto parsed = knobs::parse_group(v);
      if (const auto* error = std::get_if<std::string>(&parsed)) return *error;
      std::tie(k.group, k.explicit_groups) = std::get<0>(parsed);
      return std::nullopt;
    };
    group.show = [](const ProtocolKnobs& k) {
      return std::vector<std::string>{knobs::show_group(k.group, k.explicit_groups)};
    };
    table.push_back(std::move(group));
  }
  table.push_back(uint_knob("buckets", &ProtocolKnobs::buckets, 1, 256, "DDP gradient buckets per iteration"));
  table.push_back(choice_knob("grad-op", &ProtocolKnobs::grad_op,
                              "gradient bucket collective (reduce-scatter: distributed optimizer)"));
  {
    KnobEntry overlap;
    overlap.doc = {"grad-overlap", "", "on|off",
                   "launch each bucket as soon as its gradients are ready (off: all after the backward)"};
    overlap.set = [](ProtocolKnobs& k, const std::string& v) { return assign(knobs::parse_bool(v), k.grad_overlap); };
    overlap.show = [](const ProtocolKnobs& k) { return std::vector<std::string>{k.grad_overlap ? "on" : "off"}; };
    table.push_back(std::move(overlap));
  }
  table.push_back(rule_knob("skip", &ProtocolKnobs::skips, &knobs::parse_skip, "RANK:MODULE[:ITER]",
                            "the module does not run on that rank (an MoE expert with no tokens): no "
                            "forward, backward or amax registration"));
  table.push_back(rule_knob("empty", &ProtocolKnobs::empties, &knobs::parse_skip, "RANK:MODULE[:ITER]",
                            "the module runs on that rank with zero-element inputs (no tokens): its local amaxes are 0"));
  table.push_back(choice_knob("empty-quantize", &ProtocolKnobs::empty_quantize,
                              "current scaling, an empty input: the quantizer still joins the amax all-reduce with "
                              "amax 0 (join), or returns before it (return-early), so its peers wait for it"));
  table.push_back(rule_knob("eval", &ProtocolKnobs::evals, &knobs::parse_eval, "MODULE[:ITER]",
                            "the module runs in evaluation mode: forward only, no amax registration"));
  table.push_back(rule_knob("frozen", &ProtocolKnobs::frozen, &knobs::parse_eval, "MODULE[:ITER]",
                            "the module runs forward (and registers its forward amaxes) but has no backward on any rank: "
                            "frozen weights with no input gradient needed, or a backward that does not run in that iteration"));
  table.push_back(rule_knob("eval-backward", &ProtocolKnobs::eval_backward, &knobs::parse_eval, "MODULE[:ITER]",
                            "the module runs its forward in evaluation mode (no amax registration) but its backward "
                            "runs and registers: the frozen base layers of an adapter (LoRA) fine-tune, which the "
                            "gradient flows through"));
  table.push_back(choice_knob("reduce-at", &ProtocolKnobs::reduce_at,
                              "delayed scaling: where the forward amax reduction is launched (te-sync also waits there). "
                              "exit: at fp8_autocast exit (every TE release); next-entry: at the next autocast's entry; "
                              "first-module: in the next autocast's first module (no TE release known; with "
                              "--reduce-at-bwd auto it also ties te-sync's backward reduction to the first module)"));
  table.push_back(choice_knob("reduce-at-bwd", &ProtocolKnobs::reduce_at_bwd,
                              "delayed scaling: where the backward amax reduction is launched. first-module: at the end of "
                              "the backward of the forward's first training module (TE v0.8-v1.5's _prepare_backward on "
                              "fp8_meta[\"first_module\"]: never launched when that module is --frozen, so the backward "
                              "amaxes are consumed unreduced); last-backward: after the last module to run backward (TE "
                              "v1.6+); auto: first-module for te-async (TE v0.8-v1.5's async path) and for te-sync with "
                              "--reduce-at first-module, last-backward otherwise"));
  table.push_back(choice_knob("registration", &ProtocolKnobs::registration,
                              "delayed scaling: amax slots registered per autocast by the modules that run (dynamic: a "
                              "module that does not run shrinks that rank's buffer), or taken once, at a module's first "
                              "forward on the rank, in first-run order, and kept in every later buffer (static: TE v1.6+'s "
                              "global buffer; a module first run later on one rank mismatches the sizes until then, a "
                              "different first-run order mixes modules' amaxes)"));
  table.push_back(choice_knob("unrun", &ProtocolKnobs::unrun,
                              "static registration: a module that did not register in an autocast is updated from the "
                              "reduced buffer like the others (update: TE 1.x's update of the whole buffer) or keeps its "
                              "history and scale (keep: a rank that skipped it lags its peers)"));
  table.push_back(choice_knob("slots", &ProtocolKnobs::slots,
                              "dynamic registration: a module finds its slot in an autocast's buffer by module (keyed: "
                              "a module called twice has one slot, both calls' amaxes in it) or by the position its first "
                              "registration of the run got (positional: early TE; every call appends a slot, so a repeated "
                              "call shifts the modules after it)"));
  table.push_back(rule_knob("repeat", &ProtocolKnobs::repeats, &knobs::parse_eval, "MODULE[:ITER]",
                            "the module is called twice in a row in each forward of that iteration (a layer applied twice): "
                            "two calls, two backwards, each quantizing its own inputs"));
  {
    KnobEntry recompute;
    recompute.doc = {"recompute", "", "switch",
                     "activation recomputation: backward re-runs each module's forward casts outside the autocast",
                     true, false};
    recompute.set = [](ProtocolKnobs& k, const std::string& v) { return assign(knobs::parse_bool(v), k.recompute); };
    recompute.show = [](const ProtocolKnobs& k) { return std::vector<std::string>{k.recompute ? "on" : "off"}; };
    table.push_back(std::move(recompute));
  }
  table.push_back(choice_knob("recompute-amax", &ProtocolKnobs::recompute_amax,
                              "delayed scaling with --recompute: the recomputed forward casts with the saved scales and "
                              "registers nothing (skip: TE's checkpoint), or re-enters fp8_autocast per module, copying "
                              "back, registering and reducing its amaxes again (register: the history rolls twice)"));
  table.push_back(choice_knob("sp-gather", &ProtocolKnobs::sp_gather,
                              "sequence parallelism (needs --tp > 1): each TP peer's sequence shard of a module's forward "
                              "tensor 0 (the column-parallel GEMM's input) and backward tensor 0 (the row-parallel GEMM's "
                              "grad output) is cast to FP8 and all-gathered over the TP group before the GEMM (fp8: "
                              "TransformerEngine's FP8 gather_along_first_dim; the gathered bytes go with this rank's "
                              "scale_inv); off: shards are never gathered"));
  table.push_back(choice_knob("sp-amax", &ProtocolKnobs::sp_amax,
                              "--sp-gather fp8: the gathered tensor's scale from an amax reduced over a group holding the "
                              "TP peers (reduce) or from each rank's own amax (local: delayed scaling with the recipe's "
                              "reduce_amax=False, which skipped every reduction in TransformerEngine before its "
                              "sequence-parallel fix; current scaling: a quantizer without its TP-group amax all-reduce)"));
  table.push_back(choice_knob("fsdp", &ProtocolKnobs::fsdp,
                              "current scaling: every module gets a weight sharded over the FSDP group (DP x CP), cast to "
                              "FP8 and all-gathered in its pre-forward hook (torchao float8 with FSDP2): inline computes and "
                              "all-reduces the shard's amax at each gather; precompute all-reduces every weight's amax once "
                              "after the optimizer step (precompute_float8_dynamic_scale_for_fsdp); off: no sharded weights"));
  table.push_back(choice_knob("fsdp-amax-group", &ProtocolKnobs::fsdp_amax_group,
                              "--fsdp: the weight amax all-reduce over the FSDP mesh's group (shard: torchao after "
                              "pytorch/ao#933) or the default process group of every rank (world: torchao before it; with "
                              "pipeline parallelism the other stages never join)"));
  {
    KnobEntry seed;
    seed.doc = {"input-seed", "", "0..2^64-1", "seeds the tensor values, hence every local amax (--seed is the scheduler's)"};
    seed.set = [](ProtocolKnobs& k, const std::string& v) {
      return assign(knobs::parse_uint(v, 0, ~std::uint64_t{0}), k.seed);
    };
    seed.show = [](const ProtocolKnobs& k) { return std::vector<std::string>{fmt::format("{}", k.seed)}; };
    table.push_back(std::move(seed));
  }
  table.push_back(rule_knob("input", &ProtocolKnobs::inputs, &knobs::parse_input,
                            "RANK:ITER:MODULE:fwd|bwd[:TENSOR]=V[,V...]",
                            "hand-set tensor values (inf, nan allowed); one value fills the tensor"));
  table.push_back(uint_knob("elems", &ProtocolKnobs::elems, 1, 4096, "elements per quantized tensor"));
  table.push_back(uint_knob("fwd-tensors", &ProtocolKnobs::fwd_tensors, 1, 64, "quantized tensors per module in forward"));
  table.push_back(uint_knob("bwd-tensors", &ProtocolKnobs::bwd_tensors, 1, 64, "quantized tensors per module in backward"));
  table.push_back(uint_knob("grad-elems", &ProtocolKnobs::grad_elems, 1, 4096,
                            "gradient elements per DP member per bucket"));
  {
    KnobEntry gemm;
    gemm.doc = {"gemm-us", "", "0..1e6", "duration of one GEMM kernel in timed runs (microseconds)"};
    gemm.set = [](ProtocolKnobs& k, const std::string& v) { return assign(knobs::parse_double(v, 0, 1e6), k.gemm_us); };
    gemm.show = [](const ProtocolKnobs& k) { return std::vector<std::string>{fmt::format("{}", k.gemm_us)}; };
    table.push_back(std::move(gemm));
  }
  {
    KnobEntry bucket;
    bucket.doc = {"bucket-bytes", "", "1..2^40",
                  "bytes each gradient bucket stands for in timed runs (DDP's 25 MiB; ignored with --hidden)"};
    bucket.set = [](ProtocolKnobs& k, const std::string& v) {
      return assign(knobs::parse_uint(v, 1, std::uint64_t{1} << 40), k.bucket_bytes);
    };
    bucket.show = [](const ProtocolKnobs& k) { return std::vector<std::string>{fmt::format("{}", k.bucket_bytes)}; };
    table.push_back(std::move(bucket));
  }
  table.push_back(uint_knob("hidden", &ProtocolKnobs::hidden, 0, 65536,
                            "timed runs: hidden size of the layer each module stands for (0 = none: --gemm-us and "
                            "--bucket-bytes); GEMM FLOPs and bucket bytes follow from it"));
  table.push_back(uint_knob("tokens", &ProtocolKnobs::tokens, 1, 1u << 24, "timed runs: tokens per microbatch (with --hidden)"));
  const ProtocolKnobs defaults;
  for (KnobEntry& entry : table) {
    const auto shown = entry.show(defaults);
    entry.doc.default_value = entry.doc.repeatable ? "(none)" : shown.at(0);
  }
  return table;
}

}  // namespace

const std::vector<KnobEntry>& knob_table() {
  static const std::vector<KnobEntry> table = make_table();
  return table;
}

const KnobEntry* find_knob(const std::string& name) {
  for (const KnobEntry& entry : knob_table()) {
    if (entry.doc.name == name) return &entry;
  }
  return nullptr;
}

std::vector<KnobDoc> knob_docs() {
  std::vector<KnobDoc> docs;
  for (const KnobEntry& entry : knob_table()) docs.push_back(entry.doc);
  return docs;
}

std::optional<std::string> try_set_knob(ProtocolKnobs& knobs, const std::string& name, const std::string& value) {
  const KnobEntry* entry = find_knob(name);
  if (entry == nullptr) {
    std::string all;
    for (const KnobEntry& e : knob_table()) all += (all.empty() ? "" : ", ") + e.doc.name;
    return fmt::format("unknown knob \"{}\"; expected one of: {}", name, all);
  }
  return entry->set(knobs, value);
}

void set_knob(ProtocolKnobs& knobs, const std::string& name, const std::string& value) {
  if (auto error = try_set_knob(knobs, name, value)) throw InputError(fmt::format("--{}: {}", name, *error));
}

std::vector<std::string> knob_args(const ProtocolKnobs& knobs) {
  static const ProtocolKnobs defaults;
  std::vector<std::string> args;
  for (const KnobEntry& entry : knob_table()) {
    const auto shown = entry.show(knobs);
    if (shown == entry.show(defaults)) continue;
    for (const std::string& value : shown) {
      args.push_back("--" + entry.doc.name);
      if (!entry.doc.flag) args.push_back(value);
    }
  }
  return args;
}

std::string command_line(const ProtocolKnobs& knobs) {
  std::string line = fmt::format("amaxcheck check {}", to_string(knobs.protocol));
  for (const std::string& arg : knob_args(knobs)) line += " " + arg;
  return line;
}

}  // namespace amaxcheck
