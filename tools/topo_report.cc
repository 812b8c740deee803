#include "topo_report.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdio>
#include <string>

#include "base/check.h"
#include "base/knobs.h"
#include "core/transport_registry.h"
#include "cuda_devices.h"

#ifdef SPCCL_INFO_WITH_TOPOLOGY
#include <hwloc.h>

#include "topology/nic_choice.h"
#include "topology/topology.h"
#endif

namespace spccl::info {

namespace {

#ifdef SPCCL_INFO_WITH_TOPOLOGY
std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

void printPciDevices(const char* heading, const std::vector<topo::PciDevice>& devices) {
  std::printf("  %s: %zu\n", heading, devices.size());
  for (const topo::PciDevice& d : devices)
    std::printf(
        "    %-12s %s  NUMA node %d, %zu PCIe bridge(s) above%s%s\n", d.name().c_str(),
        d.busId.c_str(), d.numaNode, d.bridges.size(), d.osNames.size() > 1 ? "; also " : "",
        d.osNames.size() > 1
            ? joined(std::vector<std::string>(d.osNames.begin() + 1, d.osNames.end())).c_str()
            : "");
}

void printTopology() {
  const std::string xml = knobString("SPCCL_TOPO_XML");
  topo::Topology t;
  unsigned version = hwloc_get_api_version();
  std::printf("topology (hwloc %u.%u.%u, %s):\n", version >> 16, (version >> 8) & 0xff,
              version & 0xff, xml.empty() ? "this machine" : ("SPCCL_TOPO_XML=" + xml).c_str());
  if (topo::discoverTopology(xml, &t) != spcclSuccess) {
    std::printf("  not available: %s\n\n", threadLastError().c_str());
    return;
  }
  std::printf("  machine: %s\n",
              t.machineId.empty() ? "(hwloc does not say)" : t.machineId.c_str());
  std::printf("  packages: %d, NUMA nodes: %d, cores: %d, hardware threads: %d\n", t.packages,
              t.numaNodes, t.cores, t.pus);
  printPciDevices("PCI NICs", t.nics);
  printPciDevices("PCI GPUs", t.gpus);

  topo::NicRequest request;
  request.localRank = static_cast<int>(knobInt("SPCCL_LOCAL_RANK"));
  request.numaNode = topo::currentNumaNode(t);
  request.rails = static_cast<int>(knobInt("SPCCL_TOPO_RAILS"));
  request.override = knobString("SPCCL_TOPO_NIC");
  topo::NicChoice choice = topo::chooseNics(t, request);
  std::printf("\nNIC choice for this process (local rank %d, NUMA node %d, SPCCL_TOPO_RAILS %d):\n",
              request.localRank, request.numaNode, request.rails);
  if (choice.nics.empty()) std::printf("  none\n");
  for (size_t i = 0; i < choice.nics.size(); ++i)
    std::printf("  rail %zu: %s (%s)\n", i,
                t.nics[static_cast<size_t>(choice.nics[i])].name().c_str(),
                t.nics[static_cast<size_t>(choice.nics[i])].busId.c_str());
  std::printf(
      "  why: %s\n  (the ib plugin ranks its RDMA ports this way; tcp takes its rails\n"
      "  from SPCCL_SOCKET_IFNAME, below)\n\n",
      choice.why.c_str());
}
#else
void printTopology() {
  std::printf(
      "topology: not available, spccl was built without hwloc (install libhwloc-dev and\n"
      "  reconfigure); no packages, NUMA nodes or PCI NICs, and no NIC choice by PCI\n"
      "  distance. The interfaces below come from getifaddrs.\n\n");
}
#endif

// The rails of the network transport this process would use.
void printNetworkRails() {
  std::string setting = knobString("SPCCL_TRANSPORT");
  if (setting.empty()) setting = "auto";
  const std::string network = setting == "auto" ? "tcp" : setting;
  std::printf("network transport (SPCCL_TRANSPORT=%s%s):\n", setting.c_str(),
              setting == "auto" ? ": shm for peers on this host, tcp for the others" : "");
  if (network == "shm") {
    std::printf("  shm only: no network rails\n\n");
    return;
  }
  const spcclNet_v2_t* net = nullptr;
  int devices = 0;
  if (getTransport(network, &net) != spcclSuccess || net->devices(&devices) != spcclSuccess) {
    std::printf("  %s cannot start here: %s\n\n", network.c_str(), threadLastError().c_str());
    return;
  }
  const long long conns = knobInt("SPCCL_NET_CONNS_PER_RAIL");
  std::printf(
      "  %s: %d rail(s) x %lld connection(s) per rail to each peer "
      "(SPCCL_TOPO_RAILS, SPCCL_NET_CONNS_PER_RAIL)\n",
      network.c_str(), devices, conns);
  for (int dev = 0; dev < devices; ++dev) {
    spcclNetProperties_v2_t props{};
    if (net->getProperties(dev, &props) != spcclSuccess) continue;
    const std::string speed =
        props.speedMbps > 0 ? std::to_string(props.speedMbps) + " Mbit/s" : "speed unknown";
    std::printf("    rail %d: %s, %s%s%s\n", dev, props.name, speed.c_str(),
                props.pciPath[0] ? ", " : "", props.pciPath);
  }
  std::printf("\n");
}

void printInterfaces() {
  std::printf("network interfaces (getifaddrs):\n");
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    std::printf("  getifaddrs failed\n\n");
    return;
  }
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr ||
        (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
      continue;
    char address[INET6_ADDRSTRLEN] = "?";
    const void* raw =
        i->ifa_addr->sa_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr)
            : static_cast<const void*>(
                  &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr);
    inet_ntop(i->ifa_addr->sa_family, raw, address, sizeof(address));
    std::printf("  %-12s %-40s %s%s\n", i->ifa_name, address,
                (i->ifa_flags & IFF_UP) ? "up" : "down",
                (i->ifa_flags & IFF_LOOPBACK) ? ", loopback" : "");
  }
  freeifaddrs(list);
  std::printf("\n");
}

void printCudaDevices() {
  CudaDevices cuda = findCudaDevices();
  std::printf("CUDA devices%s%s:\n", cuda.runtime.empty() ? "" : " via ", cuda.runtime.c_str());
  if (cuda.devices.empty()) std::printf("  no CUDA devices (%s)\n", cuda.reason.c_str());
  for (size_t d = 0; d < cuda.devices.size(); ++d) {
    const CudaDevice& device = cuda.devices[d];
    std::printf("  %zu: %s, %s, compute capability %d.%d, %d SMs\n", d, device.name.c_str(),
                device.busId.c_str(), device.computeMajor, device.computeMinor,
                device.multiprocessors);
  }
}

}  // namespace

int printTopoReport() {
  printTopology();
  printNetworkRails();
  printInterfaces();
  printCudaDevices();
  return 0;
}

}  // namespace spccl::info
