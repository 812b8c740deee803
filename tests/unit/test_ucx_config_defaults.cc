// The ucx plugin's changes to UCX's configuration (transports/ucx/
// ucx_config_defaults.h): eager for every size over TCP alone, and never
// against a UCX_* setting of the user's.
#include <gtest/gtest.h>

#ifdef SPCCL_HAVE_UCX_PLUGIN
#include <map>
#include <string>

#include "transports/ucx/ucx_config_defaults.h"

namespace {

using spccl::ucx::configChanges;
using spccl::ucx::tlsIsTcpOnly;

TEST(UcxTls, TcpAloneOrWithSelfIsTcpOnly) {
  EXPECT_TRUE(tlsIsTcpOnly("tcp"));
  EXPECT_TRUE(tlsIsTcpOnly("tcp,self"));
  EXPECT_TRUE(tlsIsTcpOnly("self,tcp"));
  EXPECT_FALSE(tlsIsTcpOnly(nullptr));  // unset: UCX picks, shared memory and RDMA included
  EXPECT_FALSE(tlsIsTcpOnly(""));
  EXPECT_FALSE(tlsIsTcpOnly("self"));
  EXPECT_FALSE(tlsIsTcpOnly("sm"));
  EXPECT_FALSE(tlsIsTcpOnly("tcp,sm"));
  EXPECT_FALSE(tlsIsTcpOnly("rc,tcp"));
  EXPECT_FALSE(tlsIsTcpOnly("all"));
  EXPECT_FALSE(tlsIsTcpOnly("^sm"));  // everything but sm
  EXPECT_FALSE(tlsIsTcpOnly("tcpx"));
}

std::map<std::string, std::string> gEnv;
const char* lookup(const char* name) {
  auto it = gEnv.find(name);
  return it == gEnv.end() ? nullptr : it->second.c_str();
}

TEST(UcxConfigDefaults, EagerOverTcpUnlessTheUserChoseAThreshold) {
  gEnv = {{"UCX_TLS", "tcp"}};
  auto changes = configChanges(lookup);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].name, "RNDV_THRESH");
  EXPECT_EQ(changes[0].value, "inf");
  EXPECT_NE(changes[0].why.find("UCX_RNDV_THRESH"), std::string::npos);

  gEnv = {{"UCX_TLS", "tcp"}, {"UCX_RNDV_THRESH", "65536"}};
  EXPECT_TRUE(configChanges(lookup).empty());
  gEnv = {{"UCX_TLS", "sm"}};
  EXPECT_TRUE(configChanges(lookup).empty());
  gEnv = {};
  EXPECT_TRUE(configChanges(lookup).empty());
}

}  // namespace
#endif  // SPCCL_HAVE_UCX_PLUGIN
