#include "export/perfetto.h"

#include <map>
#include <set>

#include "util/atomic_file.h"

namespace amaxcheck::sched {
namespace {

using ojson = nlohmann::ordered_json;

std::uint64_t tid_of(const Action& action) {
  return action.kind == ActionKind::issue ? 1 + action.lane : 1000 + action.lane;
}

struct Span {
  double start = 0;
  double end = 0;
};

class Exporter {
 public:
  explicit Exporter(const Trace& trace) : trace_(trace) {}

  ojson build() {
    for (const TraceStep& step : trace_.steps) add_step(step);
    for (const auto& [key, members] : pending_) add_collective(key, members, end_of_trace(), true);
    for (const Hazard& hazard : trace_.hazards) add_hazard(hazard);
    ojson events = ojson::array();
    for (ojson& m : metadata()) events.push_back(std::move(m));
    for (ojson& e : events_) events.push_back(std::move(e));
    ojson out;
    out["traceEvents"] = std::move(events);
    out["displayTimeUnit"] = "ms";
    ojson other;
    other["scenario"] = trace_.header.scenario_name;
    other["strategy"] = trace_.header.strategy;
    other["seed"] = trace_.header.seed;
    other["time"] = timed() ? "microseconds (cost model)" : "step numbers";
    out["otherData"] = std::move(other);
    return out;
  }

 private:
  struct Joined {
    RankId rank = 0;
    std::uint64_t tid = 0;
    double start = 0;
    std::string op_name;
    std::size_t step = 0;
  };

  bool timed() const { return !trace_.steps.empty() && trace_.steps.front().timing.has_value(); }
  Span span_of(const TraceStep& step) const {
    if (step.timing) return {step.timing->start_us, step.timing->end_us};
    return {static_cast<double>(step.step), static_cast<double>(step.step) + 1.0};
  }
  double end_of_trace() const { return trace_.steps.empty() ? 0.0 : span_of(trace_.steps.back()).end; }

  void track(RankId rank, std::uint64_t tid, const std::string& name) { tracks_[{rank, tid}] = name; }

  void slice(RankId rank, std::uint64_t tid, const std::string& name, const char* category, Span span, ojson args) {
    ojson e;
    e["name"] = name;
    e["cat"] = category;
    e["ph"] = "X";
    e["pid"] = rank;
    e["tid"] = tid;
    e["ts"] = span.start;
    e["dur"] = span.end - span.start;
    e["args"] = std::move(args);
    events_.push_back(std::move(e));
  }

  void add_step(const TraceStep& step) {
    const Span span = span_of(step);
    ojson args;
    args["step"] = step.step;
    args["op"] = ojson{{"rank", step.op.rank}, {"thread", step.op.thread}, {"index", step.op.index}};
    switch (step.action.kind) {
      case ActionKind::issue:
      case ActionKind::execute:
        track(step.action.rank, tid_of(step.action), step.lane);
        args["action"] = to_string(step.action.kind);
        slice(step.action.rank, tid_of(step.action), step.op_name,
              step.action.kind == ActionKind::issue ? "issue" : "execute", span, std::move(args));
        break;
      case ActionKind::join:
        track(step.action.rank, tid_of(step.action), step.lane);
        pending_[{step.comm, step.seq}].push_back(
            Joined{step.action.rank, tid_of(step.action), span.start, step.op_name, step.step});
        break;
      case ActionKind::complete: {
        auto it = pending_.find({step.comm, step.seq});
        if (it == pending_.end()) break;
        add_collective(it->first, it->second, span.end, false);
        pending_.erase(it);
        break;
      }
    }
    step_span_[step.step] = span;
  }

  void add_collective(const std::pair<CommId, std::uint64_t>& key, const std::vector<Joined>& members, double end,
                      bool unfinished) {
    const std::uint64_t flow_id = (static_cast<std::uint64_t>(key.first) << 32 | key.second) + 1;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const Joined& m = members[i];
      ojson args;
      args["comm"] = key.first;
      args["seq"] = key.second;
      args["join_step"] = m.step;
      if (unfinished) args["completed"] = false;
      slice(m.rank, m.tid, unfinished ? m.op_name + " (never completed)" : m.op_name, "collective", Span{m.start, end},
            std::move(args));
      if (members.size() < 2) continue;
      ojson flow;
      flow["name"] = "collective match";
      flow["cat"] = "collective";
      flow["ph"] = i == 0 ? "s" : i + 1 == members.size() ? "f" : "t";
      flow["id"] = flow_id;
      flow["pid"] = m.rank;
      flow["tid"] = m.tid;
      flow["ts"] = m.start;
      if (i + 1 == members.size()) flow["bp"] = "e";
      events_.push_back(std::move(flow));
    }
  }

  void add_hazard(const Hazard& hazard) {
    for (const Participant& p : hazard.participants) {
      std::uint64_t tid = 0;
      for (const auto& [where, name] : tracks_) {
        if (where.first == p.rank && name == p.lane) tid = where.second;
      }
      auto span = step_span_.find(p.step);
      ojson e;
      e["name"] = std::string("hazard: ") + to_string(hazard.kind);
      e["cat"] = "hazard";
      e["ph"] = "i";
      e["s"] = tid == 0 ? "p" : "t";
      e["pid"] = p.rank;
      e["tid"] = tid;
      e["ts"] = span == step_span_.end() ? 0.0 : span->second.start;
      e["args"] = ojson{{"summary", hazard.summary}, {"op", p.op_name}, {"origin", p.origin}, {"step", p.step}};
      events_.push_back(std::move(e));
    }
  }

  std::vector<ojson> metadata() const {
    std::vector<ojson> out;
    std::set<RankId> ranks;
    for (const auto& [where, name] : tracks_) ranks.insert(where.first);
    for (RankId rank : ranks) {
      out.push_back(ojson{{"name", "process_name"}, {"ph", "M"}, {"pid", rank}, {"args", {{"name", "rank " + std::to_string(rank)}}}});
      out.push_back(ojson{{"name", "process_sort_index"}, {"ph", "M"}, {"pid", rank}, {"args", {{"sort_index", rank}}}});
    }
    for (const auto& [where, name] : tracks_) {
      out.push_back(ojson{{"name", "thread_name"}, {"ph", "M"}, {"pid", where.first}, {"tid", where.second}, {"args", {{"name", name}}}});
      out.push_back(ojson{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", where.first}, {"tid", where.second},
                          {"args", {{"sort_index", where.second}}}});
    }
    return out;
  }

  const Trace& trace_;
  std::vector<ojson> events_;
  std::map<std::pair<RankId, std::uint64_t>, std::string> tracks_;
  std::map<std::pair<CommId, std::uint64_t>, std::vector<Joined>> pending_;
  std::map<std::size_t, Span> step_span_;
};

}  // namespace

nlohmann::ordered_json to_chrome_trace(const Trace& trace) { return Exporter(trace).build(); }

void write_chrome_trace_file(const std::string& path, const Trace& trace) {
  write_file_atomically(path, to_chrome_trace(trace).dump(1) + "\n");
}

}  // namespace amaxcheck::sched
