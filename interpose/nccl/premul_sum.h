// ncclRedOpCreatePreMulSum when spccl serves the calls: an op of one
// communicator and one datatype that multiplies each rank's input by a
// scalar, then sums. spccl has no such op, so the interposer scales the
// input into a scratch buffer and runs a sum (which may then take the
// sparse path like any sum).
#pragma once

#include <nccl.h>

#include <cstddef>
#include <map>
#include <mutex>

namespace spccl::nccl {

struct PreMulSumOp {
  ncclDataType_t datatype = ncclFloat32;
  // ncclScalarHostImmediate: the value, read at creation. ncclScalarDevice:
  // the pointer, read at every call (host memory here).
  unsigned char value[8] = {};
  const void* pointer = nullptr;
};

class PreMulSumOps {
 public:
  // Returns the new op's handle (ncclNumOps and up).
  ncclRedOp_t create(const PreMulSumOp& op);
  bool destroy(ncclRedOp_t op);
  // false: not an op of this table.
  bool find(ncclRedOp_t op, PreMulSumOp* out) const;

 private:
  mutable std::mutex mutex_;
  std::map<int, PreMulSumOp> ops_;
  int next_ = ncclNumOps;
};

// Whether datatype is one a PreMulSum can scale (the types spccl knows).
bool scalable(ncclDataType_t datatype);
// out[i] = scalar * in[i] in op's datatype (integers wrap; f16 and bf16
// are computed in f32 and rounded once). out may be in.
void preMultiply(const PreMulSumOp& op, const void* in, size_t count, void* out);

}  // namespace spccl::nccl
