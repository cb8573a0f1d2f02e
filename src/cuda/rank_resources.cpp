#include "cuda/rank_resources.h"

#include <fmt/format.h>

#include <algorithm>

#include "cuda/cuda_error.h"
#include "cuda/kernels.h"
#include "cuda/watchdog.h"

namespace amaxcheck::gpu {
namespace {

float* device_floats(std::size_t count, const std::string& what) {
  void* ptr = nullptr;
  cuda_check(cudaMalloc(&ptr, std::max<std::size_t>(count, 1) * sizeof(float)), what);
  return static_cast<float*>(ptr);
}

}  // namespace

void RankResources::create(const Scenario& scenario, RankId r, int dev) {
  rank = r;
  device = dev;
  const Rank& spec = scenario.ranks.at(r);
  for (std::size_t s = 0; s < spec.streams.size(); ++s) {
    cudaStream_t stream = nullptr;
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a stream");
    streams.push_back(stream);
  }
  for (std::size_t e = 0; e < spec.events.size(); ++e) {
    cudaEvent_t event = nullptr;
    cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "creating an event");
    events.push_back(event);
  }
  for (const Buffer& buffer : spec.buffers) {
    if (buffer.host) {
      void* host = nullptr;
      cuda_check(cudaHostAlloc(&host, std::max<std::size_t>(buffer.size, 1) * sizeof(float), cudaHostAllocMapped),
                 fmt::format("allocating host buffer {}", buffer.name));
      void* mapped = nullptr;
      cuda_check(cudaHostGetDevicePointer(&mapped, host, 0), "mapping a host buffer");
      buffers.push_back(static_cast<float*>(mapped));
    } else {
      buffers.push_back(device_floats(buffer.size, fmt::format("allocating buffer {}", buffer.name)));
    }
    host_buffer.push_back(buffer.host);
  }
  std::vector<float> staged;
  for (const Thread& thread : spec.threads) {
    op_done.emplace_back(thread.program.size(), nullptr);
    fill_offset.emplace_back(thread.program.size(), 0);
    for (std::size_t i = 0; i < thread.program.size(); ++i) {
      const Op& op = thread.program[i];
      if (op.kind == OpKind::copy) {
        for (const Range& range : op.reads) copy_scratch_count = std::max(copy_scratch_count, range.count);
      }
      if (op.kind == OpKind::fill) {
        fill_offset.back()[i] = static_cast<std::uint32_t>(staged.size());
        staged.insert(staged.end(), op.values.begin(), op.values.end());
      }
      if (!moves_data(op.kind)) continue;
      cudaEvent_t done = nullptr;
      cuda_check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "creating an op event");
      op_done.back()[i] = done;
    }
  }
  for (std::size_t s = 0; s < streams.size(); ++s) {
    absmax_scratch.push_back(device_floats(absmax_max_blocks, "allocating absmax scratch"));
    copy_scratch.push_back(device_floats(copy_scratch_count, "allocating copy scratch"));
  }
  fill_values = device_floats(staged.size(), "allocating fill values");
  if (!staged.empty()) {
    cuda_check(cudaMemcpy(fill_values, staged.data(), staged.size() * sizeof(float), cudaMemcpyHostToDevice),
               "staging fill values");
  }
}

void RankResources::write_initial_values(const Scenario& scenario, const Watchdog& watchdog) {
  const Rank& spec = scenario.ranks.at(rank);
  cuda_check(cudaSetDevice(device), "selecting the rank's device");
  // Staging vectors must outlive the asynchronous copies; the wait below ends their use.
  std::vector<std::vector<float>> staging;
  cudaStream_t stream = streams.empty() ? nullptr : streams.front();
  for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
    const Buffer& buffer = spec.buffers[b];
    std::vector<float> values = buffer.init;
    values.resize(buffer.size, 0.0f);
    if (host_buffer[b]) {
      // With unified addressing (every 64-bit CUDA platform) the mapped pointer is the host one.
      std::copy(values.begin(), values.end(), buffers[b]);
      continue;
    }
    staging.push_back(std::move(values));
    cuda_check(cudaMemcpyAsync(buffers[b], staging.back().data(), staging.back().size() * sizeof(float),
                               cudaMemcpyHostToDevice, stream),
               fmt::format("writing the initial values of {}", buffer.name));
  }
  if (stream != nullptr) {
    watchdog.wait(fmt::format("initial values of rank {}", rank), [&] { return Watchdog::stream_done(stream); });
  }
}

std::vector<float> RankResources::read(const Range& range, const Watchdog& watchdog) const {
  std::vector<float> out(range.count);
  if (range.count == 0) return out;
  if (host_buffer.at(range.buffer)) {
    std::copy_n(at(range), range.count, out.begin());
    return out;
  }
  cuda_check(cudaSetDevice(device), "selecting the rank's device");
  cudaStream_t stream = streams.front();
  cuda_check(cudaMemcpyAsync(out.data(), at(range), range.count * sizeof(float), cudaMemcpyDeviceToHost, stream),
             "reading a buffer back");
  watchdog.wait(fmt::format("reading back rank {}", rank), [&] { return Watchdog::stream_done(stream); });
  return out;
}

void RankResources::destroy(bool device_healthy) {
  if (cudaSetDevice(device) != cudaSuccess) return;
  for (auto& per_thread : op_done) {
    for (cudaEvent_t event : per_thread) {
      if (event != nullptr) cudaEventDestroy(event);
    }
  }
  op_done.clear();
  for (cudaEvent_t event : events) cudaEventDestroy(event);
  events.clear();
  if (device_healthy) {
    for (std::size_t b = 0; b < buffers.size(); ++b) {
      if (host_buffer[b]) {
        cudaFreeHost(buffers[b]);
      } else {
        cudaFree(buffers[b]);
      }
    }
    for (float* p : absmax_scratch) cudaFree(p);
    for (float* p : copy_scratch) cudaFree(p);
    cudaFree(fill_values);
    for (cudaStream_t stream : streams) cudaStreamDestroy(stream);
  }
  buffers.clear();
  absmax_scratch.clear();
  copy_scratch.clear();
  fill_values = nullptr;
  streams.clear();
}

}  // namespace amaxcheck::gpu
