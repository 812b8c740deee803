// spccl_info --topo: the host as spccl sees it. The hwloc topology
// (packages, NUMA nodes, cores, PCI NICs and GPUs) when spccl was built
// with hwloc, the NIC choice for this process (topology/nic_choice.h), the
// rails the network transport would use (SPCCL_TRANSPORT, its devices and
// SPCCL_NET_CONNS_PER_RAIL), the network interfaces (getifaddrs) and the
// CUDA devices (libcudart opened lazily).
#pragma once

namespace spccl::info {

// Prints the report on stdout; returns the exit status (0: every section
// printed, whatever it found).
int printTopoReport();

}  // namespace spccl::info
