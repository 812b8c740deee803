// What a perf binary tells the harness about its collective. Each binary
// is one CollectiveSpec and a call to perfMain; everything else (options,
// timing, checking, the table, JSON) is shared.
#pragma once

#include <cstddef>

#include "common/reference_data.h"
#include "spccl.h"

namespace spccl::perf {

// Element counts of one call for a requested size, as nccl-tests'
// getCollByteCount: the size on the command line is the largest buffer a
// rank touches, rounded down to what the collective can split evenly.
struct BufferLayout {
  size_t sendCount;   // elements a rank sends from
  size_t recvCount;   // elements a rank receives into
  size_t paramCount;  // the count argument of the call
  // In place, one buffer holds both: the send data starts at
  // sendInPlaceOffset * rank elements, the receive data at
  // recvInPlaceOffset * rank (NCCL's in-place conventions).
  size_t sendInPlaceOffset;
  size_t recvInPlaceOffset;
};

struct CollectiveCall {
  const void* sendBuffer;
  void* recvBuffer;
  size_t count;  // BufferLayout::paramCount
  spcclDataType_t type;
  spcclRedOp_t op;
  int root;
  spcclComm_t comm;
  void* stream;  // --device: the stream the call goes on; else NULL
};

// Where a rank is, for computing what its receive buffer must hold.
struct CheckContext {
  int rank;
  int root;
  BufferLayout layout;
  const ReferenceData& data;
};

struct CollectiveSpec {
  const char* name;  // "all_reduce": the JSON records' collective
  bool reduces;      // takes an op (the redop column), else "none"
  bool rooted;       // takes -r (the root column), else -1
  // busbw = algbw * factor: the fraction of the data that crosses each
  // rank's link in an optimal algorithm (nccl-tests' PERFORMANCE.md).
  double (*busBandwidthFactor)(int nranks);
  BufferLayout (*layout)(size_t count, int nranks);
  spcclResult_t (*run)(const CollectiveCall& call);
  // The value element `index` of this rank's receive buffer must hold.
  double (*expected)(const CheckContext& context, size_t index);
  // Whether the collective defines this rank's receive buffer at all
  // (reduce: only the root's); nullptr means every rank's.
  bool (*definesResultOn)(int rank, int root);
};

// The run loop of every perf binary; returns the process exit status:
// 0, 1 when a check found a wrong element, 2 on a usage or spccl error.
int perfMain(int argc, char** argv, const CollectiveSpec& spec);

}  // namespace spccl::perf

namespace spccl::perf::bus_factor {

// nccl-tests' bus bandwidth factors (its doc/PERFORMANCE.md).
// All-reduce: each rank sends and receives 2(n-1)/n of the data.
inline double allReduce(int nranks) { return 2.0 * (nranks - 1) / nranks; }
// All-gather, reduce-scatter, all-to-all: (n-1)/n of it crosses a link.
inline double allButOwnShare(int nranks) { return static_cast<double>(nranks - 1) / nranks; }
// Broadcast, reduce: the data crosses each link once.
inline double once(int /*nranks*/) { return 1.0; }

}  // namespace spccl::perf::bus_factor
