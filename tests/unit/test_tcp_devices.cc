// The tcp transport's devices (ABI version 2): the first SPCCL_TOPO_RAILS
// interfaces SPCCL_SOCKET_IFNAME matches, each listed once, each listening
// on its own address; a device index out of range is refused by name; only
// host memory registers.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <set>
#include <string>

#include "base/check.h"
#include "transports/tcp/tcp_net.h"

namespace {

class TcpDevices : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("SPCCL_SOCKET_IFNAME");
    unsetenv("SPCCL_TOPO_RAILS");
  }
  spcclResult_t init(const char* ifname, const char* rails) {
    setenv("SPCCL_SOCKET_IFNAME", ifname, 1);
    setenv("SPCCL_TOPO_RAILS", rails, 1);
    spcclNetInitArgs_v2_t args{};
    args.timeoutMs = 10000;
    return net_->init(&args);
  }
  const spcclNet_v2_t* net_ = spcclNetTcp();
};

TEST_F(TcpDevices, OneRailByDefault) {
  ASSERT_EQ(init("^docker", "1"), spcclSuccess) << spccl::threadLastError();
  int n = 0;
  ASSERT_EQ(net_->devices(&n), spcclSuccess);
  EXPECT_EQ(n, 1);
}

TEST_F(TcpDevices, RailsAreDistinctInterfacesEachListeningOnItsOwnAddress) {
  ASSERT_EQ(init("^docker", "8"), spcclSuccess) << spccl::threadLastError();
  int n = 0;
  ASSERT_EQ(net_->devices(&n), spcclSuccess);
  ASSERT_GE(n, 1);  // lo at least
  std::set<std::string> names;
  for (int dev = 0; dev < n; ++dev) {
    spcclNetProperties_v2_t props{};
    ASSERT_EQ(net_->getProperties(dev, &props), spcclSuccess) << spccl::threadLastError();
    EXPECT_TRUE(names.insert(props.name).second) << props.name << " listed twice";
    EXPECT_GE(props.speedMbps, 0);
    EXPECT_EQ(props.ptrSupport, SPCCL_PTR_HOST) << "sockets send from host memory only";
    unsigned char handle[SPCCL_NET_HANDLE_MAXSIZE];
    void* listenComm = nullptr;
    ASSERT_EQ(net_->listen(dev, handle, &listenComm), spcclSuccess) << spccl::threadLastError();
    char where[128] = {};
    ASSERT_EQ(net_->describe(listenComm, where, sizeof(where)), spcclSuccess);
    if (std::string(props.name) == "lo") {
      std::string address = where;
      EXPECT_TRUE(address.rfind("127.", 0) == 0 || address.rfind("[::1]", 0) == 0) << address;
    }
    net_->closeListen(listenComm);
  }
  EXPECT_TRUE(names.count("lo")) << "lo matches ^docker and is up";
}

TEST_F(TcpDevices, ADeviceOutOfRangeIsRefusedByName) {
  ASSERT_EQ(init("lo", "2"), spcclSuccess) << spccl::threadLastError();
  int n = 0;
  ASSERT_EQ(net_->devices(&n), spcclSuccess);
  EXPECT_EQ(n, 1) << "only lo matches";
  unsigned char handle[SPCCL_NET_HANDLE_MAXSIZE];
  void* comm = nullptr;
  EXPECT_EQ(net_->listen(1, handle, &comm), spcclInvalidArgument);
  EXPECT_NE(spccl::threadLastError().find("dev 1"), std::string::npos) << spccl::threadLastError();
  EXPECT_EQ(net_->connect(-1, handle, &comm), spcclInvalidArgument);
  spcclNetProperties_v2_t props{};
  EXPECT_EQ(net_->getProperties(5, &props), spcclInvalidArgument);
}

TEST_F(TcpDevices, OnlyHostMemoryIsRegistered) {
  ASSERT_EQ(init("lo", "1"), spcclSuccess) << spccl::threadLastError();
  EXPECT_EQ(net_->regMrDmaBuf, nullptr);
  char buffer[64];
  void* mhandle = &mhandle;
  EXPECT_EQ(net_->regMr(nullptr, buffer, sizeof(buffer), SPCCL_PTR_HOST, &mhandle), spcclSuccess);
  EXPECT_EQ(mhandle, nullptr);
  EXPECT_EQ(net_->regMr(nullptr, buffer, sizeof(buffer), SPCCL_PTR_CUDA, &mhandle),
            spcclInvalidArgument);
  EXPECT_NE(spccl::threadLastError().find("memory type 2"), std::string::npos);
}

TEST_F(TcpDevices, ABadRailsKnobFailsInitNamingIt) {
  EXPECT_EQ(init("lo", "0"), spcclInvalidArgument);
  EXPECT_NE(spccl::threadLastError().find("SPCCL_TOPO_RAILS=0"), std::string::npos)
      << spccl::threadLastError();
}

}  // namespace
