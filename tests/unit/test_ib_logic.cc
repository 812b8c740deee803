// The ib plugin's logic that needs no RDMA device: SPCCL_IB_HCA parsing,
// which ports become devices and in which order, link speed, the
// memory-registration cache (host and GPU page widening), RTR/RTS
// attributes for InfiniBand and RoCE, GID choice; and the exported v2
// table before init. (No RDMA hardware exists on the machines these tests
// run on; the verbs data path itself is not exercised here.)
#ifdef SPCCL_HAVE_IB_PLUGIN
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "base/check.h"
#include "spccl_net.h"
#include "transports/ib/ib_device_list.h"
#include "transports/ib/ib_gdr_support.h"
#include "transports/ib/ib_hca_spec.h"
#include "transports/ib/ib_mr_cache.h"
#include "transports/ib/ib_qp_setup.h"

using namespace spccl::ib;

namespace {

TEST(IbHcaSpec, EmptySelectsEverything) { EXPECT_TRUE(hcaSelected(parseHcaSpec(""), "mlx5_0", 1)); }

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

TEST(IbHcaSpec, ListPositionFollowsTheListedOrder) {
  HcaSpec spec = parseHcaSpec("mlx5_1,mlx5_0:2");
  EXPECT_EQ(hcaListPosition(spec, "mlx5_1", 1), 0u);
  EXPECT_EQ(hcaListPosition(spec, "mlx5_0", 2), 1u);
  EXPECT_EQ(hcaListPosition(parseHcaSpec("^mlx5_1,mlx5_0"), "mlx5_2", 1), 0u);
  EXPECT_EQ(hcaListPosition(parseHcaSpec(""), "mlx5_2", 1), 0u);
}

std::vector<IbPort> activePorts(const std::vector<std::pair<const char*, int>>& names) {
  std::vector<IbPort> ports;
  for (const auto& [device, port] : names) {
    IbPort p;
    p.device = device;
    p.port = port;
    ports.push_back(p);
  }
  return ports;
}

std::vector<std::string> namesOf(const std::vector<ChosenDevice>& devices) {
  std::vector<std::string> names;
  for (const ChosenDevice& d : devices) names.push_back(portName(d.port));
  return names;
}

// Stands in for src/topology: ranks a fixed order and records what it was asked.
struct FakeTopology {
  explicit FakeTopology(std::vector<std::string> closestFirst) : order(std::move(closestFirst)) {}
  std::vector<std::string> order;
  std::vector<std::string> askedCandidates;
  int askedRails = 0;
  RankHcas ranker() {
    return [this](const std::vector<std::string>& candidates, int rails) {
      askedCandidates = candidates;
      askedRails = rails;
      HcaRanking ranking;
      ranking.why = order.empty() ? "no NIC among the candidates" : order.front() + " is closest";
      for (const std::string& hca : order)
        for (const std::string& c : candidates)
          if (c == hca) ranking.hcas.push_back(hca);
      return ranking;
    };
  }
};

TEST(IbDeviceList, HcaFilterThenTopologyOrderUnrankedLast) {
  auto ports =
      activePorts({{"mlx5_0", 1}, {"mlx5_0", 2}, {"mlx5_1", 1}, {"mlx5_2", 1}, {"mlx4_0", 1}});
  FakeTopology topology({"mlx5_2", "mlx5_0"});
  auto devices = chooseDevices(ports, parseHcaSpec("^mlx5_0:2,mlx4"), 8, topology.ranker());
  EXPECT_EQ(topology.askedCandidates, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  EXPECT_EQ(topology.askedRails, 3);  // min(knob 8, 3 candidate ports)
  EXPECT_EQ(namesOf(devices), (std::vector<std::string>{"mlx5_2:1", "mlx5_0:1", "mlx5_1:1"}));
  EXPECT_NE(devices[0].reason.find("closest by topology: mlx5_2 is closest"), std::string::npos)
      << devices[0].reason;
  EXPECT_NE(devices[1].reason.find("HCA 2 in topology order"), std::string::npos);
  EXPECT_NE(devices[2].reason.find("not in the topology's ranking"), std::string::npos);
}

TEST(IbDeviceList, PortsOfTheClosestHcaComeFirstInSpecOrder) {
  auto ports = activePorts({{"mlx5_0", 1}, {"mlx5_0", 2}, {"mlx5_1", 1}});
  FakeTopology topology({"mlx5_0", "mlx5_1"});
  auto devices = chooseDevices(ports, parseHcaSpec("mlx5_0:2,mlx5"), 2, topology.ranker());
  EXPECT_EQ(namesOf(devices), (std::vector<std::string>{"mlx5_0:2", "mlx5_0:1"}));
}

TEST(IbDeviceList, WithoutTopologyTheFirstPortsInSpecOrder) {
  auto ports = activePorts({{"mlx5_0", 1}, {"mlx5_0", 2}, {"mlx5_1", 1}});
  auto devices = chooseDevices(ports, parseHcaSpec("mlx5_1,mlx5_0"), 2, nullptr);
  EXPECT_EQ(namesOf(devices), (std::vector<std::string>{"mlx5_1:1", "mlx5_0:1"}));
  EXPECT_EQ(devices[0].reason, "SPCCL_IB_HCA order");
  auto all = chooseDevices(ports, parseHcaSpec(""), 3, nullptr);
  EXPECT_EQ(namesOf(all), (std::vector<std::string>{"mlx5_0:1", "mlx5_0:2", "mlx5_1:1"}));
  EXPECT_EQ(all[0].reason, "discovery order");
}

TEST(IbDeviceList, NoTopologyOrderFallsBackToSpecOrderAndSaysWhy) {
  auto ports = activePorts({{"mlx5_0", 1}, {"mlx5_1", 1}});
  FakeTopology unknown({});  // hwloc knows neither HCA (soft-RoCE, a VM)
  auto devices = chooseDevices(ports, parseHcaSpec("mlx5_1,mlx5_0"), 1, unknown.ranker());
  ASSERT_EQ(namesOf(devices), (std::vector<std::string>{"mlx5_1:1"}));
  EXPECT_NE(devices[0].reason.find("no topology order (no NIC among the candidates)"),
            std::string::npos)
      << devices[0].reason;
}

TEST(IbDeviceList, RailsAreCappedByKnobPortsAndAbiLimit) {
  auto two = activePorts({{"mlx5_0", 1}, {"mlx5_1", 1}});
  EXPECT_EQ(chooseDevices(two, {}, 1, nullptr).size(), 1u);  // SPCCL_TOPO_RAILS' default
  EXPECT_EQ(chooseDevices(two, {}, 0, nullptr).size(), 1u);  // at least one
  EXPECT_EQ(chooseDevices(two, {}, -3, nullptr).size(), 1u);
  EXPECT_EQ(chooseDevices(two, {}, 3, nullptr).size(), 2u);  // only two ports
  std::vector<IbPort> many(SPCCL_NET_MAX_DEVICES + 4);
  for (size_t i = 0; i < many.size(); ++i) many[i].device = "mlx5_" + std::to_string(i);
  FakeTopology topology({"mlx5_3"});
  auto devices = chooseDevices(many, {}, 100, topology.ranker());
  EXPECT_EQ(devices.size(), static_cast<size_t>(SPCCL_NET_MAX_DEVICES));
  EXPECT_EQ(topology.askedRails, SPCCL_NET_MAX_DEVICES);
  EXPECT_EQ(devices[0].port.device, "mlx5_3");
}

TEST(IbDeviceList, NoSelectedPortNoDevice) {
  auto ports = activePorts({{"mlx5_0", 1}});
  EXPECT_TRUE(chooseDevices(ports, parseHcaSpec("mlx4"), 4, nullptr).empty());
  EXPECT_TRUE(chooseDevices({}, {}, 4, nullptr).empty());
}

TEST(IbDeviceList, OutOfRangeDeviceIndexNamesCallAndArgument) {
  EXPECT_EQ(checkDeviceIndex("listen", 0, 2), spcclSuccess);
  EXPECT_EQ(checkDeviceIndex("listen", 1, 2), spcclSuccess);
  EXPECT_EQ(checkDeviceIndex("connect", 2, 2), spcclInvalidArgument);
  EXPECT_NE(spccl::threadLastError().find("ib connect: dev=2 is out of range (2 devices: 0..1)"),
            std::string::npos)
      << spccl::threadLastError();
  EXPECT_EQ(checkDeviceIndex("listen", -1, 2), spcclInvalidArgument);
  EXPECT_NE(spccl::threadLastError().find("ib listen: dev=-1"), std::string::npos);
  EXPECT_EQ(checkDeviceIndex("getProperties", 0, 0), spcclInvalidUsage);
  EXPECT_NE(spccl::threadLastError().find("no devices"), std::string::npos);
}

TEST(IbPort, NameAndLinkSpeed) {
  IbPort port;
  port.device = "mlx5_0";
  port.port = 1;
  EXPECT_EQ(portName(port), "mlx5_0:1");
  EXPECT_EQ(linkSpeedMbps(32, 2), 100000);    // 4x EDR, also 100GbE RoCE
  EXPECT_EQ(linkSpeedMbps(64, 2), 200000);    // 4x HDR
  EXPECT_EQ(linkSpeedMbps(1, 1), 2500);       // 1x SDR
  EXPECT_EQ(linkSpeedMbps(128, 16), 200000);  // 2x NDR
  EXPECT_EQ(linkSpeedMbps(0, 2), 0);          // unknown speed code
  EXPECT_EQ(linkSpeedMbps(32, 3), 0);         // unknown width code
}

// The exported table without a successful init (no device here for one):
// v2 under its symbol, no v1 table, and dev arguments refused by name.
TEST(IbPluginTable, ExportsV2AndRefusesDevicesWithoutInit) {
  void* plugin = dlopen(SPCCL_NET_IB_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(plugin, nullptr) << dlerror();
  auto* table = static_cast<const spcclNet_v2_t*>(dlsym(plugin, SPCCL_NET_PLUGIN_SYMBOL));
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(dlsym(plugin, SPCCL_NET_PLUGIN_SYMBOL_V1), nullptr);
  EXPECT_STREQ(table->name, "ib");
  EXPECT_EQ(table->abiVersion, SPCCL_NET_ABI_VERSION);
  auto lastError = reinterpret_cast<const char* (*)()>(dlsym(plugin, "spcclNetPluginLastError_v1"));
  ASSERT_NE(lastError, nullptr);
  int ndev = -1;
  if (access("/sys/class/infiniband", F_OK) != 0) {  // no RDMA device: init fails, no devices
    EXPECT_EQ(table->init(nullptr), spcclSystemError);
  }
  EXPECT_EQ(table->devices(&ndev), spcclSuccess);
  EXPECT_EQ(ndev, 0);
  char handle[SPCCL_NET_HANDLE_MAXSIZE] = {};
  void* comm = nullptr;
  EXPECT_EQ(table->listen(5, handle, &comm), spcclInvalidUsage);
  EXPECT_NE(std::string(lastError()).find("ib listen: dev=5"), std::string::npos) << lastError();
  spcclNetProperties_v2_t props;
  EXPECT_EQ(table->getProperties(-1, &props), spcclInvalidUsage);
  EXPECT_NE(std::string(lastError()).find("ib getProperties: dev=-1"), std::string::npos);
  EXPECT_EQ(table->getProperties(0, nullptr), spcclInvalidArgument);
  EXPECT_NE(std::string(lastError()).find("props is NULL"), std::string::npos);
  dlclose(plugin);
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

// GPU memory (regMr of SPCCL_PTR_CUDA) is widened to 64 KiB GPU pages, host
// memory in the same cache still to host pages: a host buffer widened to
// 64 KiB could reach unmapped pages and make ibv_reg_mr fail.
TEST(IbMrCache, GpuBuffersWidenToGpuPagesHostBuffersToHostPages) {
  Registrar reg;
  MrCache cache = reg.make(8);
  // Addresses the registrar records but nothing dereferences (no GPU here).
  const uintptr_t gpuPage = uintptr_t{0x7f0000000000} + 3 * kGpuPageBytes;
  auto* gpu = reinterpret_cast<const char*>(gpuPage);
  Registration* a = nullptr;
  Registration* b = nullptr;
  ASSERT_EQ(cache.acquire(gpu + 5000, 100, kGpuPageBytes, &a), spcclSuccess);
  EXPECT_EQ(a->base, gpuPage);
  EXPECT_EQ(a->length, kGpuPageBytes);
  ASSERT_EQ(cache.acquire(gpu + 40000, 100, kGpuPageBytes, &b), spcclSuccess);  // same GPU page
  EXPECT_EQ(a, b);
  ASSERT_EQ(cache.acquire(gpu + kGpuPageBytes - 10, 20, kGpuPageBytes, &b), spcclSuccess);
  EXPECT_EQ(b->base, gpuPage);  // straddles two GPU pages: both
  EXPECT_EQ(b->length, 2 * kGpuPageBytes);
  EXPECT_EQ(cache.misses(), 2u);

  std::vector<char> host(3 * 4096);
  Registration* h = nullptr;
  ASSERT_EQ(cache.acquire(host.data() + 5000, 100, &h), spcclSuccess);
  EXPECT_EQ(h->base % 4096, 0u);
  EXPECT_EQ(h->length, 4096u);
  EXPECT_TRUE(covers(*h, host.data() + 5000, 100));
  EXPECT_FALSE(covers(*h, host.data() + 5000, 4096));

  // What regMr asks the cache for, per type.
  EXPECT_EQ(registrationPageBytes(SPCCL_PTR_CUDA, 4096), kGpuPageBytes);
  EXPECT_EQ(registrationPageBytes(SPCCL_PTR_HOST, 4096), 4096u);
  EXPECT_EQ(cache.pageSize(), 4096u);
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
