// Checked collectives that a test can issue alone or inside a group: each
// builds this rank's input and the CPU reference (tests/common/
// coll_reference.h) in its constructor and uploads the input; issue() makes
// the call, verify() downloads the result and compares it bit for bit.
// check() does both in a row.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "gpu_collectives_world.h"
#include "memory_kinds.h"
#include "spccl.h"

namespace spccl::gpu_coll_test {

class CheckedCall {
 public:
  virtual ~CheckedCall() = default;
  CheckedCall(const CheckedCall&) = delete;
  CheckedCall& operator=(const CheckedCall&) = delete;
  virtual spcclResult_t issue() = 0;
  // The output (the send buffer in place) equals expected_ element by element.
  void verify() const;
  const std::string& what() const { return what_; }

 protected:
  // send_ and recv_ hold sendElements and recvElements (recv_ one byte in
  // place); expected_ the checkedElements of the output.
  CheckedCall(cudaStream_t s, spcclDataType_t type, bool inPlace, std::string what,
              size_t sendElements, size_t recvElements, size_t checkedElements,
              MemoryKind kind = deviceKind());
  void* out() const { return (inPlace_ ? send_ : recv_).get(); }

  cudaStream_t stream_;
  spcclDataType_t type_;
  bool inPlace_;
  std::string what_;
  size_t checked_;
  std::vector<char> expected_;
  gpu_test::KindBuffer send_, recv_;
};

void check(CheckedCall& call);

class AllReduceCheck : public CheckedCall {
 public:
  AllReduceCheck(cudaStream_t s, spcclDataType_t type, spcclRedOp_t op, size_t count, bool inPlace,
                 MemoryKind kind = deviceKind());
  spcclResult_t issue() override;

 private:
  spcclRedOp_t op_;
  size_t count_;
};

// Rank r sends rank p count elements tagValue(r, p, i).
class AllToAllCheck : public CheckedCall {
 public:
  AllToAllCheck(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace);
  spcclResult_t issue() override;

 private:
  size_t count_;
};

struct AllToAllvLayout;

// Uneven blocks (variableCount(count, r, p) from rank r to rank p) with one
// element of gap before each. Out of place the gaps of the receive buffer
// keep 0x5a; in place one buffer as long as the longer extent holds the
// input, and what the received blocks do not cover keeps the input.
class AllToAllvCheck : public CheckedCall {
 public:
  AllToAllvCheck(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace);
  spcclResult_t issue() override;

 private:
  AllToAllvCheck(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace,
                 const AllToAllvLayout& layout);
  std::vector<size_t> sendcounts_, sdispls_, recvcounts_, rdispls_;
};

void checkAllReduce(cudaStream_t s, spcclDataType_t type, spcclRedOp_t op, size_t count,
                    bool inPlace, MemoryKind kind = deviceKind());
void checkAllToAll(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace);
void checkAllToAllv(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace = false);
// The root sends rank r count elements tagValue(root, r, i).
void checkScatter(cudaStream_t s, spcclDataType_t type, size_t count, int root);
// Rank r sends the root count elements tagValue(r, root, i).
void checkGather(cudaStream_t s, spcclDataType_t type, size_t count, int root);

}  // namespace spccl::gpu_coll_test
