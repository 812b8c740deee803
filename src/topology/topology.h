// The host's topology as spccl needs it, read with hwloc: NUMA nodes, and
// the NICs and GPUs on PCIe with their NUMA node and the chain of PCIe
// bridges above them (to tell "behind the same switch" from "same socket"
// from "across sockets"). From this machine, or from an hwloc XML export
// (SPCCL_TOPO_XML, or a test's synthetic topology).
#pragma once

#include <string>
#include <vector>

#include "spccl.h"

namespace spccl::topo {

struct PciDevice {
  enum class Kind { Nic, Gpu };
  Kind kind = Kind::Nic;
  std::string busId;                 // "0000:04:00.0"
  std::vector<std::string> osNames;  // "mlx5_0", "ib0", "eth0", "cuda0", ...
  int numaNode = -1;                 // OS index; -1 when hwloc does not say
  std::vector<int> bridges;          // hwloc gp_index of the bridges above, host bridge first
  // The first OS name, or the bus id when the OS shows none.
  const std::string& name() const { return osNames.empty() ? busId : osNames.front(); }
  bool hasName(const std::string& n) const;
};

struct Topology {
  std::string source;     // "this machine" or the XML path
  std::string machineId;  // hostname and DMI product UUID when hwloc knows them
  int packages = 0;       // sockets
  int numaNodes = 0;
  int cores = 0;
  int pus = 0;                  // hardware threads
  std::vector<PciDevice> nics;  // PCI class 02xx (Ethernet, InfiniBand, ...)
  std::vector<PciDevice> gpus;  // PCI class 03xx (display, 3D: GPUs)
  std::vector<int> numaOfPu;    // by PU OS index; -1 unknown
};

// xmlPath empty: this machine.
spcclResult_t discoverTopology(const std::string& xmlPath, Topology* out);

// NUMA node of the CPU the calling thread runs on now, -1 when unknown.
int currentNumaNode(const Topology& topology);

// One INFO line per device, for SPCCL_DEBUG=INFO.
void logTopology(const Topology& topology);

}  // namespace spccl::topo
