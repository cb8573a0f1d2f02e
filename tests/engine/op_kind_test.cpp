// The place predicates of op_kind.h test a bit of a mask worked out from op_kind_table: each
// must answer what the kind's row says.
#include <gtest/gtest.h>

#include "model/op_kind.h"

namespace amaxcheck {
namespace {

TEST(OpKind, each_place_predicate_answers_what_the_kinds_row_says) {
  int hosts = 0, comms = 0;
  for (const OpKindInfo& info : op_kind_table) {
    const OpKind kind = info.value;
    EXPECT_EQ(is_collective(kind), info.place == OpPlace::collective) << info.name;
    EXPECT_EQ(is_p2p(kind), info.place == OpPlace::p2p) << info.name;
    EXPECT_EQ(is_comm_op(kind), info.place == OpPlace::collective || info.place == OpPlace::p2p) << info.name;
    EXPECT_EQ(is_host_op(kind), info.place == OpPlace::host) << info.name;
    EXPECT_EQ(is_device_op(kind), info.place != OpPlace::host) << info.name;
    hosts += is_host_op(kind);
    comms += is_comm_op(kind);
  }
  EXPECT_EQ(hosts, 5);  // the three synchronizes, host_signal, host_wait
  EXPECT_EQ(comms, 6);  // four collectives, send, recv
}

}  // namespace
}  // namespace amaxcheck
