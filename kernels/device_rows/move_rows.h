// The token all-reduces' device-side row moves (docs/gpu.md, "Token
// all-reduces of device buffers"): the kept rows of a [tokens x hidden]
// device tensor gathered into a packed device buffer (only those cross
// PCIe), the all-reduced packed rows scattered back, and the pruned rows
// zeroed (spcclPruneZero). Rows are moved as bytes: no element is read as
// a number, so every type is moved bit for bit.
//
// Written once for the GPU (move_rows.cu, a fatbin libspccl loads through
// the driver) and the emulated driver's host stand-in
// (tests/cuda_emulation/emulated_row_kernels.cc), which runs these same
// per-byte functions: it checks this logic and the call's schedule, not
// the CUDA code around it. Kernel names are the ABI with the fatbin.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels::device_rows {

constexpr unsigned kThreads = 256;

// The kernels' one parameter, by value (pointers as 64-bit integers).
struct RowsArgs {
  uint64_t tensor;    // [tokens x rowBytes]
  uint64_t packed;    // [rowCount x rowBytes] (gather, scatter)
  uint64_t rows;      // [rowCount] uint64 token indices, each < tokens
  uint64_t rowCount;  // rows to move or zero
  uint64_t rowBytes;
  uint64_t tokens;
};

// gather: packed row r = tensor row rows[r]; scatter: the reverse; zero:
// tensor row rows[r] = zero bytes. Each thread of a grid-stride loop takes
// bytes i of [0, rowCount * rowBytes).
constexpr const char* kGatherKernel = "spcclGatherRows";
constexpr const char* kScatterKernel = "spcclScatterRows";
constexpr const char* kZeroKernel = "spcclZeroRows";

// The byte of the tensor that byte i of the packed rows maps to;
// UINT64_MAX for a row index out of range (the host checked them; never
// written out of bounds).
SPCCL_HOST_DEVICE inline uint64_t tensorByte(const RowsArgs& args, uint64_t i) {
  const uint64_t row = reinterpret_cast<const uint64_t*>(args.rows)[i / args.rowBytes];
  if (row >= args.tokens) return UINT64_MAX;
  return row * args.rowBytes + i % args.rowBytes;
}

SPCCL_HOST_DEVICE inline void gatherByte(const RowsArgs& args, uint64_t i) {
  const uint64_t at = tensorByte(args, i);
  if (at != UINT64_MAX)
    reinterpret_cast<unsigned char*>(args.packed)[i] =
        reinterpret_cast<const unsigned char*>(args.tensor)[at];
}

SPCCL_HOST_DEVICE inline void scatterByte(const RowsArgs& args, uint64_t i) {
  const uint64_t at = tensorByte(args, i);
  if (at != UINT64_MAX)
    reinterpret_cast<unsigned char*>(args.tensor)[at] =
        reinterpret_cast<const unsigned char*>(args.packed)[i];
}

SPCCL_HOST_DEVICE inline void zeroByte(const RowsArgs& args, uint64_t i) {
  const uint64_t at = tensorByte(args, i);
  if (at != UINT64_MAX) reinterpret_cast<unsigned char*>(args.tensor)[at] = 0;
}

}  // namespace spccl::kernels::device_rows
