// The reduction of the device-resident all-reduce (src/coll/
// device_all_reduce.h): out[i] = in[0][i] op in[1][i] op ... op in[k-1][i],
// left to right (rank order, so every rank computes the same bits), each
// step rounded to the storage type as the CPU's pairwise reduce does
// (kernels/cpu/reduce_ops.h), then divided by `divisor` when it is not 0
// (spcclAvg: a sum, then one division, as the CPU path finishes it).
//
// Written once for the GPU (reduce_inputs.cu, compiled to a fatbin that
// libspccl loads through the driver at run time) and the emulated driver's
// host stand-in (tests/cuda_emulation), which checks the schedule, not
// this kernel. One kernel per (type, op), named by kernelName: the name is
// the ABI between libspccl and the fatbin (cuModuleGetFunction).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/element_format.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/host_device.h"
#include "spccl.h"

namespace spccl::kernels::device_reduce {

// Inputs per launch; more ranks chain launches whose first input is the
// output so far (still left to right).
constexpr int kMaxInputs = 16;

// The one kernel parameter, passed by value (the same layout on host and
// device: pointers as 64-bit integers).
struct ReduceInputsArgs {
  uint64_t inputs[kMaxInputs];
  uint64_t output;
  uint64_t count;
  int32_t inputCount;
  int32_t divisor;  // 0: none
};

// "spcclReduceInputs_f32_sum"; nullptr for a type or op it has no kernel for.
inline const char* typeSuffix(spcclDataType_t type) {
  switch (type) {
    case spcclInt8:
      return "i8";
    case spcclUint8:
      return "u8";
    case spcclInt32:
      return "i32";
    case spcclUint32:
      return "u32";
    case spcclInt64:
      return "i64";
    case spcclUint64:
      return "u64";
    case spcclFloat16:
      return "f16";
    case spcclFloat32:
      return "f32";
    case spcclFloat64:
      return "f64";
    case spcclBfloat16:
      return "bf16";
    default:
      return nullptr;
  }
}

// Avg has no kernel of its own: Sum with a divisor.
inline const char* opSuffix(spcclRedOp_t op) {
  switch (op) {
    case spcclSum:
    case spcclAvg:
      return "sum";
    case spcclProd:
      return "prod";
    case spcclMax:
      return "max";
    case spcclMin:
      return "min";
    default:
      return nullptr;
  }
}

constexpr const char* kKernelPrefix = "spcclReduceInputs_";

// Element i of the output.
template <typename Format, typename Op>
SPCCL_HOST_DEVICE inline void reduceInputsAt(const ReduceInputsArgs& args, size_t i) {
  using Storage = typename Format::Storage;
  auto in = [&](int k) { return reinterpret_cast<const Storage*>(args.inputs[k])[i]; };
  Storage acc = in(0);
  for (int k = 1; k < args.inputCount; ++k)
    acc = Format::store(Op::apply(Format::load(acc), Format::load(in(k))));
  if (args.divisor != 0) acc = Format::store(divideTruncating(Format::load(acc), args.divisor));
  reinterpret_cast<Storage*>(args.output)[i] = acc;
}

}  // namespace spccl::kernels::device_reduce
