// Pipeline schedules (pp > 1): each stage runs its microbatches' forwards and backwards in the
// order its schedule gives (schedule.h: pipeline_order), receiving activations from the previous
// stage and gradients from the next, as Megatron-LM's p2p_communication does on the pipeline
// group (member index = stage).
//
// A forward of microbatch k on stage s: recv the activation from stage s-1 (s > 0), the forward
// pass (modules, autocast exit), send the output activation to stage s+1 (s < last). A backward:
// recv the output gradient from stage s+1, loss.backward() (the autograd thread runs the modules'
// backward), send the input gradient to stage s-1. Under 1f1b, a send followed at once by the
// recv of the next step goes out as one batch_isend_irecv group, as Megatron's
// send_forward_recv_backward / send_backward_recv_forward do; gpipe's sends and recvs are
// single. The transfers run on the compute stream, so compute waits for them (Megatron waits
// on the requests at once).
#include <fmt/format.h>

#include "protocols/generator.h"
#include "protocols/schedule.h"
#include "util/check.h"

namespace amaxcheck {

void ProgramGenerator::write_p2p(RankState& rs, std::optional<Op> send, std::optional<Op> recv, std::uint32_t a,
                                 const std::string& what) {
  const std::uint32_t group = send && recv ? rs.next_group++ : 0;
  const std::string where = origin(a, std::nullopt, what);
  if (send) {
    send->group = group;
    rs.writer.emit(rs.main, *send, send->peer > rs.stage ? "send_activation" : "send_grad", where);
  }
  if (recv) {
    recv->group = group;
    rs.writer.emit(rs.main, *recv, recv->peer < rs.stage ? "recv_activation" : "recv_grad", where);
  }
}

void ProgramGenerator::write_pipeline_iteration(RankState& rs, std::uint32_t iter) {
  AMAX_CHECK(rs.pp_comm.has_value(), "a pipelined rank without a pipeline group");
  const bool first = rs.stage == 0;
  const bool last = rs.stage + 1 == knobs_.pp;
  const bool batched = knobs_.pp_schedule == PpSchedule::one_f_one_b;
  const CommId comm = *rs.pp_comm;
  const auto recv_forward = [&] { return first ? std::nullopt : std::optional<Op>(recv_op(rs.compute, comm, rs.stage - 1, rs.writer.whole(rs.act_in))); };
  const auto recv_backward = [&] { return last ? std::nullopt : std::optional<Op>(recv_op(rs.compute, comm, rs.stage + 1, rs.writer.whole(rs.grad_in))); };
  const auto send_forward = [&] {
    return last ? std::nullopt
                : std::optional<Op>(send_op(rs.compute, comm, rs.stage + 1, rs.writer.whole(rs.modules[rs.module_count - 1].activation)));
  };
  const auto send_backward = [&] {
    return first ? std::nullopt : std::optional<Op>(send_op(rs.compute, comm, rs.stage - 1, rs.writer.whole(rs.modules[0].dgrad)));
  };
  const std::vector<PipeStep> order = pipeline_order(knobs_, rs.stage);
  bool received = false;  // the step's input came with the previous step's batched send
  for (std::size_t i = 0; i < order.size(); ++i) {
    const PipeStep& step = order[i];
    const std::uint32_t a = iter * knobs_.microbatches + step.microbatch;
    const bool next_turns = batched && i + 1 < order.size() && order[i + 1].forward != step.forward;
    const std::uint32_t next_a = next_turns ? iter * knobs_.microbatches + order[i + 1].microbatch : a;
    if (step.forward) {
      if (!received) write_p2p(rs, std::nullopt, recv_forward(), a, "recv_forward");
      write_forward_pass(rs, a);
      if (next_turns) {
        write_p2p(rs, send_forward(), recv_backward(), a, fmt::format("send_forward_recv_backward (microbatch {})", next_a % knobs_.microbatches));
      } else {
        write_p2p(rs, send_forward(), std::nullopt, a, "send_forward");
      }
    } else {
      if (!received) write_p2p(rs, std::nullopt, recv_backward(), a, "recv_backward");
      write_backward_call(rs, a);
      write_backward(rs, a);
      if (next_turns) {
        write_p2p(rs, send_backward(), recv_forward(), a, fmt::format("send_backward_recv_forward (microbatch {})", next_a % knobs_.microbatches));
      } else {
        write_p2p(rs, send_backward(), std::nullopt, a, "send_backward");
      }
    }
    received = next_turns;
  }
}

}  // namespace amaxcheck
