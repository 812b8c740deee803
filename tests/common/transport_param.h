// Multi-process fault tests parameterised by transport: "tcp", "shm", or
// "tcp_lanes" (tcp with three connections per peer and every payload above
// 4 KiB cut across them, runtime/lane_split.h). The children forked by
// forkRanks inherit the environment set here.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace spccl::testing {

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class TransportParamTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    std::string param = GetParam();
    bool lanes = param == "tcp_lanes";
    setenv("SPCCL_TRANSPORT", lanes ? "tcp" : param.c_str(), 1);
    if (lanes) {
      setenv("SPCCL_NET_CONNS_PER_RAIL", "3", 1);
      setenv("SPCCL_NET_STRIPE_MIN_BYTES", "0", 1);
    }
  }
  void TearDown() override {
    unsetenv("SPCCL_NET_CONNS_PER_RAIL");
    unsetenv("SPCCL_NET_STRIPE_MIN_BYTES");
  }
};

}  // namespace spccl::testing
