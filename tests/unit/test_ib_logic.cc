// The ib plugin's logic that needs no RDMA device: SPCCL_IB_HCA parsing,
// the memory-registration cache, RTR/RTS attributes for InfiniBand and
// RoCE, GID choice. (No RDMA hardware exists on the machines these tests
// run on; the verbs data path itself is not exercised here.)
#ifdef SPCCL_HAVE_IB_PLUGIN
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "transports/ib/ib_hca_spec.h"
#include "transports/ib/ib_mr_cache.h"
#include "transports/ib/ib_qp_setup.h"

using namespace spccl::ib;

namespace {

TEST(IbHcaSpec, EmptySelectsEverything) {
  EXPECT_TRUE(hcaSelected(parseHcaSpec(""), "mlx5_0", 1));
}

TEST(IbHcaSpec, PrefixesPortsExclusionAndExactNames) {
  HcaSpec spec = parseHcaSpec("mlx5_0:1,mlx5_1");
  EXPECT_TRUE(hcaSelected(spec, "mlx5_0", 1));
  EXPECT_FALSE(hcaSelected(spec, "mlx5_0", 2));
  EXPECT_TRUE(hcaSelected(spec, "mlx5_1", 2));
  EXPECT_TRUE(hcaSelected(spec, "mlx5_10", 1));  // a prefix
  EXPECT_FALSE(hcaSelected(spec, "mlx4_0", 1));

  HcaSpec exact = parseHcaSpec("=mlx5_1");
  EXPECT_TRUE(hcaSelected(exact, "mlx5_1", 1));
  EXPECT_FALSE(hcaSelected(exact, "mlx5_10", 1));

  HcaSpec excluded = parseHcaSpec("^=mlx5_2:1");
  EXPECT_TRUE(excluded.exclude);
  EXPECT_FALSE(hcaSelected(excluded, "mlx5_2", 1));
  EXPECT_TRUE(hcaSelected(excluded, "mlx5_2", 2));
  EXPECT_TRUE(hcaSelected(excluded, "mlx5_0", 1));
}

// Stands in for ibv_reg_mr/ibv_dereg_mr (no device here) and records the calls.
struct Registrar {
  std::map<uintptr_t, size_t> live;  // base -> length
  int registered = 0;
  int deregistered = 0;
  bool refuse = false;
  MrCache make(size_t capacity) {
    return MrCache(
        [this](void* base, size_t length, Registration* out) {
          if (refuse) return spcclSystemError;
          live[reinterpret_cast<uintptr_t>(base)] = length;
          out->lkey = out->rkey = static_cast<uint32_t>(++registered);
          return spcclSuccess;
        },
        [this](Registration& r) {
          live.erase(r.base);
          ++deregistered;
        },
        capacity, 4096);
  }
};

TEST(IbMrCache, CoveredBuffersReuseOneRegistrationWidenedToPages) {
  Registrar reg;
  MrCache cache = reg.make(8);
  std::vector<char> buffer(5 * 4096);
  Registration* a = nullptr;
  Registration* b = nullptr;
  ASSERT_EQ(cache.acquire(buffer.data() + 100, 3 * 4096, &a), spcclSuccess);
  EXPECT_EQ(a->base % 4096, 0u);
  EXPECT_EQ((a->base + a->length) % 4096, 0u);
  EXPECT_LE(a->base, reinterpret_cast<uintptr_t>(buffer.data() + 100));
  EXPECT_GE(a->base + a->length, reinterpret_cast<uintptr_t>(buffer.data() + 100 + 3 * 4096));
  ASSERT_EQ(cache.acquire(buffer.data() + 200, 1000, &b), spcclSuccess);  // inside: a hit
  EXPECT_EQ(a, b);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(a->refs, 2);
  cache.release(a);
  cache.release(b);
  EXPECT_EQ(reg.deregistered, 0);  // kept for the next message
}

TEST(IbMrCache, EvictsLeastRecentlyUsedUnreferencedBeyondCapacity) {
  Registrar reg;
  MrCache cache = reg.make(2);
  std::vector<std::vector<char>> buffers(4, std::vector<char>(8192));
  Registration* r[4] = {};
  for (int i = 0; i < 3; ++i) ASSERT_EQ(cache.acquire(buffers[i].data(), 100, &r[i]), spcclSuccess);
  EXPECT_EQ(cache.entries(), 3u);  // all referenced: nothing may go
  uintptr_t base0 = r[0]->base, base2 = r[2]->base;
  for (int i = 0; i < 3; ++i) cache.release(r[i]);
  EXPECT_EQ(cache.entries(), 2u);  // r[0], the least recently used, went
  EXPECT_EQ(reg.live.count(base0), 0u);
  ASSERT_EQ(cache.acquire(buffers[2].data(), 100, &r[2]), spcclSuccess);  // a hit: now MRU
  EXPECT_EQ(cache.misses(), 3u);
  cache.release(r[2]);
  ASSERT_EQ(cache.acquire(buffers[3].data(), 100, &r[3]), spcclSuccess);
  cache.release(r[3]);
  EXPECT_EQ(cache.entries(), 2u);  // r[1] went, r[2] (used more recently) stayed
  EXPECT_EQ(reg.live.count(base2), 1u);
  EXPECT_EQ(reg.deregistered, 2);
}

TEST(IbMrCache, CapacityZeroRegistersPerMessageAndFailuresPropagate) {
  Registrar reg;
  {
    MrCache cache = reg.make(0);
    std::vector<char> buffer(100);
    Registration* r = nullptr;
    ASSERT_EQ(cache.acquire(buffer.data(), buffer.size(), &r), spcclSuccess);
    cache.release(r);
    EXPECT_EQ(reg.deregistered, 1);
    reg.refuse = true;
    EXPECT_EQ(cache.acquire(buffer.data(), buffer.size(), &r), spcclSystemError);
    EXPECT_EQ(cache.entries(), 0u);
  }
  EXPECT_TRUE(reg.live.empty());
}

QpInfo port(uint8_t linkLayer, uint32_t qpn, uint16_t lid, uint8_t mtu, uint8_t gidByte) {
  QpInfo info;
  info.qpn = qpn;
  info.psn = qpn * 7 & 0xffffff;
  info.lid = lid;
  info.port = 1;
  info.linkLayer = linkLayer;
  info.mtu = mtu;
  info.gidIndex = 3;
  std::memset(info.gid, gidByte, sizeof(info.gid));
  return info;
}

TEST(IbQpSetup, InfiniBandAddressesThePeerByLid) {
  QpInfo local = port(IBV_LINK_LAYER_INFINIBAND, 10, 5, IBV_MTU_4096, 1);
  QpInfo remote = port(IBV_LINK_LAYER_INFINIBAND, 20, 9, IBV_MTU_2048, 2);
  ASSERT_EQ(checkQpInfo(remote, local), nullptr);
  RtrAttributes rtr = rtrAttributes(local, remote);
  EXPECT_EQ(rtr.attr.dest_qp_num, 20u);
  EXPECT_EQ(rtr.attr.rq_psn, remote.psn);
  EXPECT_EQ(rtr.attr.path_mtu, IBV_MTU_2048);  // the smaller
  EXPECT_EQ(rtr.attr.ah_attr.is_global, 0);
  EXPECT_EQ(rtr.attr.ah_attr.dlid, 9);
  EXPECT_TRUE(rtr.mask & IBV_QP_AV);
  RtsAttributes rts = rtsAttributes(local);
  EXPECT_EQ(rts.attr.sq_psn, local.psn);
  EXPECT_EQ(rts.attr.qp_state, IBV_QPS_RTS);
}

TEST(IbQpSetup, RoceAddressesThePeerByGidThroughAGrh) {
  QpInfo local = port(IBV_LINK_LAYER_ETHERNET, 10, 0, IBV_MTU_1024, 1);
  QpInfo remote = port(IBV_LINK_LAYER_ETHERNET, 20, 0, IBV_MTU_4096, 0xab);
  ASSERT_EQ(checkQpInfo(remote, local), nullptr);  // no LID needed on Ethernet
  RtrAttributes rtr = rtrAttributes(local, remote);
  EXPECT_EQ(rtr.attr.ah_attr.is_global, 1);
  EXPECT_EQ(rtr.attr.ah_attr.grh.sgid_index, 3);
  EXPECT_EQ(rtr.attr.ah_attr.grh.dgid.raw[0], 0xab);
  EXPECT_EQ(rtr.attr.ah_attr.grh.dgid.raw[15], 0xab);
  EXPECT_EQ(rtr.attr.path_mtu, IBV_MTU_1024);
}

TEST(IbQpSetup, RefusesForeignOrMismatchedPeers) {
  QpInfo local = port(IBV_LINK_LAYER_INFINIBAND, 10, 5, IBV_MTU_4096, 1);
  QpInfo roce = port(IBV_LINK_LAYER_ETHERNET, 20, 0, IBV_MTU_4096, 2);
  EXPECT_NE(checkQpInfo(roce, local), nullptr);
  QpInfo noLid = port(IBV_LINK_LAYER_INFINIBAND, 20, 0, IBV_MTU_4096, 2);
  EXPECT_NE(checkQpInfo(noLid, local), nullptr);
  QpInfo foreign = port(IBV_LINK_LAYER_INFINIBAND, 20, 9, IBV_MTU_4096, 2);
  foreign.magic = 0x12345678;
  EXPECT_NE(checkQpInfo(foreign, local), nullptr);
}

TEST(IbQpSetup, GidChoicePrefersRoceV2WithIpv4) {
  GidEntry linkLocalV1{0, {}, "IB/RoCE v1"};
  linkLocalV1.gid.raw[0] = 0xfe;
  linkLocalV1.gid.raw[1] = 0x80;
  GidEntry v6V2{1, {}, "RoCE v2"};
  v6V2.gid.raw[0] = 0xfd;
  GidEntry v4V2{3, {}, "RoCE v2"};
  v4V2.gid.raw[10] = v4V2.gid.raw[11] = 0xff;
  v4V2.gid.raw[12] = 10;
  EXPECT_EQ(pickGidIndex({linkLocalV1, v6V2, v4V2}), 3);
  EXPECT_EQ(pickGidIndex({linkLocalV1, v6V2}), 1);
  EXPECT_EQ(pickGidIndex({linkLocalV1}), 0);
  EXPECT_EQ(pickGidIndex({}), -1);
}

}  // namespace
#endif  // SPCCL_HAVE_IB_PLUGIN
