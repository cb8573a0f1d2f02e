#include "protocols/program_writer.h"

#include "util/check.h"

namespace amaxcheck {
namespace {

template <typename Named>
std::uint32_t find_or_add(std::vector<Named>& items, const std::string& name) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].name == name) return static_cast<std::uint32_t>(i);
  }
  items.push_back(Named{});
  items.back().name = name;
  return static_cast<std::uint32_t>(items.size() - 1);
}

}  // namespace

ThreadId RankWriter::thread(const std::string& name) { return find_or_add(rank_->threads, name); }
StreamId RankWriter::stream(const std::string& name) { return find_or_add(rank_->streams, name); }
EventId RankWriter::event(const std::string& name) { return find_or_add(rank_->events, name); }

std::uint32_t RankWriter::flag(const std::string& name) {
  for (std::size_t i = 0; i < rank_->flags.size(); ++i) {
    if (rank_->flags[i] == name) return static_cast<std::uint32_t>(i);
  }
  rank_->flags.push_back(name);
  return static_cast<std::uint32_t>(rank_->flags.size() - 1);
}

BufferId RankWriter::buffer(const std::string& name, std::uint32_t size, std::vector<float> init) {
  for (const Buffer& b : rank_->buffers) AMAX_CHECK(b.name != name, "buffer " + name + " created twice");
  AMAX_CHECK(init.empty() || init.size() == size, "buffer " + name + " init size");
  Buffer buffer;
  buffer.name = name;
  buffer.size = size;
  buffer.init = std::move(init);
  rank_->buffers.push_back(std::move(buffer));
  return static_cast<BufferId>(rank_->buffers.size() - 1);
}

Range RankWriter::whole(BufferId buffer) const { return Range{buffer, 0, rank_->buffers.at(buffer).size}; }

void RankWriter::emit(ThreadId thread, Op op, std::string name, std::string origin) {
  op.name = std::move(name);
  op.origin = std::move(origin);
  rank_->threads.at(thread).program.push_back(std::move(op));
}

Op fill_op(StreamId stream, Range out, std::vector<float> values, double cost_us) {
  Op op;
  op.kind = OpKind::fill;
  op.stream = stream;
  op.writes = {out};
  op.values = std::move(values);
  op.cost_us = cost_us;
  return op;
}

Op local_amax_op(StreamId stream, Range in, Range out) {
  Op op;
  op.kind = OpKind::local_amax;
  op.stream = stream;
  op.reads = {in};
  op.writes = {out};
  return op;
}

Op cast_op(StreamId stream, Range in, Range scale, Range out, Fp8Format format) {
  Op op;
  op.kind = OpKind::fp8_cast;
  op.stream = stream;
  op.format = format;
  op.reads = {in, scale};
  op.writes = {out};
  return op;
}

Op copy_op(StreamId stream, Range from, Range to, double cost_us) {
  Op op;
  op.kind = OpKind::copy;
  op.stream = stream;
  op.reads = {from};
  op.writes = {to};
  op.cost_us = cost_us;
  return op;
}

Op scale_update_op(StreamId stream, const ScaleUpdateParams& params, Range history, Range scale, Range scale_inv) {
  Op op;
  op.kind = OpKind::scale_update;
  op.stream = stream;
  op.scale = params;
  op.format = params.format;
  op.reads = {history, scale};
  op.writes = {history, scale, scale_inv};
  return op;
}

Op send_op(StreamId stream, CommId comm, std::uint32_t peer, Range in) {
  Op op;
  op.kind = OpKind::send;
  op.stream = stream;
  op.comm = comm;
  op.peer = peer;
  op.reads = {in};
  return op;
}

Op recv_op(StreamId stream, CommId comm, std::uint32_t peer, Range out) {
  Op op;
  op.kind = OpKind::recv;
  op.stream = stream;
  op.comm = comm;
  op.peer = peer;
  op.writes = {out};
  return op;
}

Op collective_op(OpKind kind, StreamId stream, CommId comm, ReduceOp reduce, Range in, Range out) {
  Op op;
  op.kind = kind;
  op.stream = stream;
  op.comm = comm;
  op.reduce = reduce;
  op.reads = {in};
  op.writes = {out};
  return op;
}

Op event_record_op(StreamId stream, EventId event) {
  Op op;
  op.kind = OpKind::event_record;
  op.stream = stream;
  op.event = event;
  return op;
}

Op stream_wait_event_op(StreamId stream, EventId event) {
  Op op = event_record_op(stream, event);
  op.kind = OpKind::stream_wait_event;
  return op;
}

Op work_wait_op(StreamId stream, EventId event) {
  Op op = event_record_op(stream, event);
  op.kind = OpKind::work_wait;
  return op;
}

Op device_synchronize_op() {
  Op op;
  op.kind = OpKind::device_synchronize;
  return op;
}

Op host_signal_op(std::uint32_t flag) {
  Op op;
  op.kind = OpKind::host_signal;
  op.flag = flag;
  return op;
}

Op host_wait_op(std::uint32_t flag, std::uint32_t count) {
  Op op;
  op.kind = OpKind::host_wait;
  op.flag = flag;
  op.count = count;
  return op;
}

}  // namespace amaxcheck
