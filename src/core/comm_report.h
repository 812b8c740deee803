// What a communicator says at SPCCL_DEBUG=INFO (subsystem INIT) when it is
// ready, as NCCL's "Init COMPLETE": one line per rank with its transports,
// rails and link model, and on rank 0 one line with the algorithm tables.
#pragma once

#include <string>
#include <vector>

#include "core/comm.h"

namespace spccl {

// How this rank reaches its peers (core/comm.cc's routes, summed up).
struct PeerLinks {
  int shmPeers = 0;
  int networkPeers = 0;
  std::string network;                 // "tcp", or a plugin's name
  int fewestRails = 0, mostRails = 0;  // over the network peers
  int connsPerRail = 0;                // the fewest over the network peers
  std::vector<std::string> devices;    // this rank's network devices (rails), in order
};

// "comm 0x... rank 0 nranks 3 host h pid 12 - Init COMPLETE: shm to 1 peer,
// tcp to 1 peer (1 rail x 1 connection: eth0); alpha 12.3 us, 4.56 GB/s
// (measured)".
std::string describeRankReady(const spcclComm& comm, const PeerLinks& links);

// "comm 0x... nranks 3 on 2 hosts, transport auto; dense: AllReduce
// ring|recursive_doubling, ... (cost model); sparse: bp|hc|... (planner)".
std::string describeCommTables(const spcclComm& comm);

// Logs both (the tables on rank 0 only) when INIT is on at INFO.
void logCommReady(const spcclComm& comm, const PeerLinks& links);

}  // namespace spccl
