// What collectives write (op_effects.cpp, complete_collective), checked against a plain
// computation: every kind, small results (kept on the stack) and large ones (on the heap), in
// place and with an output that overlaps its input at an offset (the result must be computed
// from the inputs before any output is written).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/builder.h"

namespace amaxcheck {
namespace {

constexpr std::uint32_t ranks = 3;

/// Rank r's input: distinct per rank and element, with a -0, a NaN and an infinity among them.
std::vector<float> input_of(std::uint32_t rank, std::uint32_t count) {
  std::vector<float> values;
  for (std::uint32_t k = 0; k < count; ++k) values.push_back(static_cast<float>((k * 7 + rank * 13) % 29) - 14.5f);
  if (count > 3) {
    values[0] = rank == 0 ? -0.0f : 0.0f;  // -0 first: the max must still give +0
    values[1] = rank == 2 ? NAN : 1.0f;
    values[2] = rank == 0 ? INFINITY : 2.0f;
  }
  return values;
}

/// Every rank runs one collective of `kind` on buffer 0, which holds the input at 0 and room
/// after it; `out_offset` places the output (0: in place). Returns every rank's final buffer.
std::vector<std::vector<float>> run_collective(OpKind kind, ReduceOp reduce, std::uint32_t in_count,
                                               std::uint32_t out_count, std::uint32_t out_offset,
                                               std::uint32_t root = 0) {
  ScenarioBuilder b("collective_values");
  std::vector<RankId> members;
  for (std::uint32_t r = 0; r < ranks; ++r) members.push_back(b.rank());
  const CommId comm = b.comm("world", members);
  const std::uint32_t size = std::max(in_count, out_offset + out_count);
  for (RankId r : members) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId buf = b.buffer(r, "data", size, input_of(r, in_count));
    Op op = ScenarioBuilder::all_reduce(s, comm, {buf, 0, in_count}, {buf, out_offset, out_count}, "collective", reduce);
    op.kind = kind;
    op.root = root;
    b.op(r, t, op);
  }
  const Scenario scenario = b.build();
  Engine engine(scenario);
  run_first_enabled(engine);
  std::vector<std::vector<float>> finals;
  for (RankId r : members) finals.push_back(engine.read(r, {0, 0, size}));
  return finals;
}

/// The buffer a rank should end with: its input, then `result_part` written at `out_offset`.
std::vector<float> expected_buffer(std::uint32_t rank, std::uint32_t in_count, std::uint32_t out_offset,
                                   const std::vector<float>& result_part) {
  std::vector<float> buffer = input_of(rank, in_count);
  buffer.resize(std::max<std::size_t>(in_count, out_offset + result_part.size()), 0.0f);
  for (std::size_t k = 0; k < result_part.size(); ++k) buffer[out_offset + k] = result_part[k];
  return buffer;
}

std::vector<float> reduced(ReduceOp reduce, std::uint32_t count) {
  std::vector<float> acc = input_of(0, count);
  for (std::uint32_t r = 1; r < ranks; ++r) {
    const std::vector<float> in = input_of(r, count);
    for (std::uint32_t k = 0; k < count; ++k) {
      if (reduce == ReduceOp::sum) {
        acc[k] = acc[k] + in[k];
      } else if (acc[k] == in[k]) {
        acc[k] = std::signbit(acc[k]) ? in[k] : acc[k];  // +0 over -0
      } else {
        acc[k] = std::isnan(acc[k]) ? in[k] : std::isnan(in[k]) ? acc[k] : std::max(acc[k], in[k]);
      }
    }
  }
  return acc;
}

void expect_bits_equal(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[k]), std::bit_cast<std::uint32_t>(want[k])) << what << " at " << k;
  }
}

// 5 values stay on the stack; 300 (900 gathered) go to the heap.
const std::uint32_t counts[] = {6, 300};

TEST(CollectiveValues, all_reduce_writes_the_reduction_in_place_and_into_an_overlapping_output) {
  for (std::uint32_t n : counts) {
    for (ReduceOp reduce : {ReduceOp::sum, ReduceOp::max}) {
      for (std::uint32_t offset : {0u, 1u, n}) {
        const auto finals = run_collective(OpKind::all_reduce, reduce, n, n, offset);
        for (std::uint32_t r = 0; r < ranks; ++r) {
          expect_bits_equal(finals[r], expected_buffer(r, n, offset, reduced(reduce, n)),
                            std::string(enum_name(reduce)) + " n " + std::to_string(n) + " offset " +
                                std::to_string(offset) + " rank " + std::to_string(r));
        }
      }
    }
  }
}

TEST(CollectiveValues, reduce_scatter_gives_each_member_its_slice_of_the_reduction) {
  for (std::uint32_t n : counts) {
    const std::uint32_t slice = n / ranks;
    const std::vector<float> all = reduced(ReduceOp::sum, slice * ranks);
    for (std::uint32_t offset : {0u, 1u}) {
      const auto finals = run_collective(OpKind::reduce_scatter, ReduceOp::sum, slice * ranks, slice, offset);
      for (std::uint32_t r = 0; r < ranks; ++r) {
        const std::vector<float> part(all.begin() + r * slice, all.begin() + (r + 1) * slice);
        expect_bits_equal(finals[r], expected_buffer(r, slice * ranks, offset, part),
                          "n " + std::to_string(n) + " offset " + std::to_string(offset) + " rank " + std::to_string(r));
      }
    }
  }
}

TEST(CollectiveValues, all_gather_concatenates_the_inputs_in_member_order) {
  for (std::uint32_t n : counts) {
    std::vector<float> gathered;
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const std::vector<float> in = input_of(r, n);
      gathered.insert(gathered.end(), in.begin(), in.end());
    }
    for (std::uint32_t offset : {0u, 1u}) {
      const auto finals = run_collective(OpKind::all_gather, ReduceOp::sum, n, n * ranks, offset);
      for (std::uint32_t r = 0; r < ranks; ++r) {
        expect_bits_equal(finals[r], expected_buffer(r, n, offset, gathered),
                          "n " + std::to_string(n) + " offset " + std::to_string(offset) + " rank " + std::to_string(r));
      }
    }
  }
}

TEST(CollectiveValues, broadcast_copies_the_roots_input_to_every_member) {
  for (std::uint32_t n : counts) {
    for (std::uint32_t root = 0; root < ranks; ++root) {
      const auto finals = run_collective(OpKind::broadcast, ReduceOp::sum, n, n, 1, root);
      for (std::uint32_t r = 0; r < ranks; ++r) {
        expect_bits_equal(finals[r], expected_buffer(r, n, 1, input_of(root, n)),
                          "n " + std::to_string(n) + " root " + std::to_string(root) + " rank " + std::to_string(r));
      }
    }
  }
}

}  // namespace
}  // namespace amaxcheck
