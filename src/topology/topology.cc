#include "topology/topology.h"

#include <hwloc.h>
#include <sched.h>

#include <cstdio>

#include "base/check.h"
#include "base/log.h"

namespace spccl::topo {

namespace {

// PCI base classes (PCI Code and ID Assignment Specification, section 1).
constexpr unsigned kClassNetwork = 0x02;
constexpr unsigned kClassDisplay = 0x03;

std::string busIdOf(hwloc_obj_t pci) {
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", pci->attr->pcidev.domain,
                pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
  return text;
}

std::string info(hwloc_obj_t obj, const char* name) {
  const char* value = hwloc_obj_get_info_by_name(obj, name);
  return value ? value : "";
}

PciDevice describe(hwloc_topology_t topology, hwloc_obj_t pci) {
  PciDevice device;
  device.busId = busIdOf(pci);
  for (hwloc_obj_t child = pci->io_first_child; child != nullptr; child = child->next_sibling)
    if (child->type == HWLOC_OBJ_OS_DEVICE && child->name != nullptr)
      device.osNames.push_back(child->name);
  hwloc_obj_t cpuSide = hwloc_get_non_io_ancestor_obj(topology, pci);
  if (cpuSide != nullptr && cpuSide->nodeset != nullptr && !hwloc_bitmap_iszero(cpuSide->nodeset))
    device.numaNode = hwloc_bitmap_first(cpuSide->nodeset);
  for (hwloc_obj_t up = pci->parent; up != nullptr && up->type == HWLOC_OBJ_BRIDGE; up = up->parent)
    device.bridges.insert(device.bridges.begin(), static_cast<int>(up->gp_index));
  return device;
}

}  // namespace

bool PciDevice::hasName(const std::string& n) const {
  if (n == busId) return true;
  for (const std::string& os : osNames)
    if (os == n) return true;
  return false;
}

spcclResult_t discoverTopology(const std::string& xmlPath, Topology* out) {
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0)
    return SPCCL_FAIL(spcclSystemError, "hwloc_topology_init failed");
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (!xmlPath.empty() && hwloc_topology_set_xml(topology, xmlPath.c_str()) != 0) {
    hwloc_topology_destroy(topology);
    return SPCCL_FAIL(spcclInvalidArgument, "topology XML %s cannot be read by hwloc",
                      xmlPath.c_str());
  }
  if (hwloc_topology_load(topology) != 0) {
    hwloc_topology_destroy(topology);
    return SPCCL_FAIL(spcclSystemError, "hwloc could not load the topology of %s",
                      xmlPath.empty() ? "this machine" : xmlPath.c_str());
  }
  Topology t;
  t.source = xmlPath.empty() ? "this machine" : xmlPath;
  hwloc_obj_t root = hwloc_get_root_obj(topology);
  t.machineId = info(root, "HostName");
  std::string uuid = info(root, "DMIProductUUID");
  if (!uuid.empty()) t.machineId += "/" + uuid;
  t.packages = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE);
  t.numaNodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  t.cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  t.pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  for (hwloc_obj_t pci = nullptr; (pci = hwloc_get_next_pcidev(topology, pci)) != nullptr;) {
    unsigned base = pci->attr->pcidev.class_id >> 8;
    if (base == kClassNetwork) {
      t.nics.push_back(describe(topology, pci));
    } else if (base == kClassDisplay) {
      t.gpus.push_back(describe(topology, pci));
      t.gpus.back().kind = PciDevice::Kind::Gpu;
    }
  }
  int pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  for (int i = 0; i < pus; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    if (static_cast<int>(pu->os_index) >= static_cast<int>(t.numaOfPu.size()))
      t.numaOfPu.resize(pu->os_index + 1, -1);
    if (pu->nodeset != nullptr && !hwloc_bitmap_iszero(pu->nodeset))
      t.numaOfPu[pu->os_index] = hwloc_bitmap_first(pu->nodeset);
  }
  hwloc_topology_destroy(topology);
  *out = std::move(t);
  return spcclSuccess;
}

int currentNumaNode(const Topology& topology) {
  int cpu = sched_getcpu();
  if (cpu < 0 || cpu >= static_cast<int>(topology.numaOfPu.size())) return -1;
  return topology.numaOfPu[static_cast<size_t>(cpu)];
}

void logTopology(const Topology& topology) {
  SPCCL_INFO(kLogInit, "topology of %s (%s): %d NUMA node(s), %zu NIC(s), %zu GPU(s)",
             topology.source.c_str(), topology.machineId.c_str(), topology.numaNodes,
             topology.nics.size(), topology.gpus.size());
  for (const auto* list : {&topology.nics, &topology.gpus})
    for (const PciDevice& d : *list)
      SPCCL_INFO(kLogInit, "  %s %s at %s, NUMA node %d, %zu bridge(s) above",
                 d.kind == PciDevice::Kind::Nic ? "NIC" : "GPU", d.name().c_str(), d.busId.c_str(),
                 d.numaNode, d.bridges.size());
}

}  // namespace spccl::topo
