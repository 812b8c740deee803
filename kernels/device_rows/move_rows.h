// The token all-reduces' device-side row moves (docs/gpu.md, "Token
// all-reduces of device buffers"): the kept rows of a [tokens x hidden]
// device tensor gathered into a packed device buffer (only those cross
// PCIe), the all-reduced packed rows scattered back, and the pruned rows
// zeroed (spcclPruneZero). Rows are moved as raw words of 16, 4 or 1
// byte(s) (the widest that the row width and both buffers' addresses
// allow): no element is read as a number, so every type is moved bit for
// bit.
//
// Written once for the GPU (move_rows.cu, a fatbin libspccl loads through
// the driver) and the emulated driver's host stand-in
// (tests/cuda_emulation/emulated_row_kernels.cc), which runs these same
// per-word functions: it checks this logic and the call's schedule, not
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
  uint64_t wordBytes;  // 16, 4 or 1 (wordBytesFor): the unit each thread moves
};

// gather: packed row r = tensor row rows[r]; scatter: the reverse; zero:
// tensor row rows[r] = zero bytes. Each thread of a grid-stride loop takes
// words i of [0, words(args)).
constexpr const char* kGatherKernel = "spcclGatherRows";
constexpr const char* kScatterKernel = "spcclScatterRows";
constexpr const char* kZeroKernel = "spcclZeroRows";

enum class Move { Gather, Scatter, Zero };

// A 16-byte word (a uint4's size and alignment, as one vector load and
// store on the GPU).
struct alignas(16) Word16 {
  uint64_t low, high;
};

// The widest word that divides the row width and both addresses (the
// packed rows' 0 for zero), so that every word is aligned.
SPCCL_HOST_DEVICE inline uint64_t wordBytesFor(uint64_t tensor, uint64_t packed,
                                               uint64_t rowBytes) {
  const uint64_t all = tensor | packed | rowBytes;
  if (all % sizeof(Word16) == 0) return sizeof(Word16);
  if (all % sizeof(uint32_t) == 0) return sizeof(uint32_t);
  return 1;
}

// The unit moveUnit moves: args.wordBytes where it is 16 or 4, else a
// byte (a launch that left it 0 moves bytes, never divides by it).
SPCCL_HOST_DEVICE inline uint64_t unitBytes(const RowsArgs& args) {
  return args.wordBytes == sizeof(Word16) || args.wordBytes == sizeof(uint32_t) ? args.wordBytes
                                                                                : 1;
}

// How many words the launch moves.
SPCCL_HOST_DEVICE inline uint64_t words(const RowsArgs& args) {
  return args.rowCount * (args.rowBytes / unitBytes(args));
}

// The word of the tensor that word i of the packed rows maps to (both in
// units of Word); UINT64_MAX for a row index out of range (the host
// checked them; never written out of bounds).
template <typename Word>
SPCCL_HOST_DEVICE inline uint64_t tensorWord(const RowsArgs& args, uint64_t i) {
  const uint64_t rowWords = args.rowBytes / sizeof(Word);
  const uint64_t row = reinterpret_cast<const uint64_t*>(args.rows)[i / rowWords];
  if (row >= args.tokens) return UINT64_MAX;
  return row * rowWords + i % rowWords;
}

template <typename Word>
SPCCL_HOST_DEVICE inline void moveWord(Move move, const RowsArgs& args, uint64_t i) {
  const uint64_t at = tensorWord<Word>(args, i);
  if (at == UINT64_MAX) return;
  auto* tensor = reinterpret_cast<Word*>(args.tensor);
  auto* packed = reinterpret_cast<Word*>(args.packed);
  if (move == Move::Gather)
    packed[i] = tensor[at];
  else if (move == Move::Scatter)
    tensor[at] = packed[i];
  else
    tensor[at] = Word{};
}

// Word i of the launch, in unitBytes(args) units.
SPCCL_HOST_DEVICE inline void moveUnit(Move move, const RowsArgs& args, uint64_t i) {
  if (unitBytes(args) == sizeof(Word16))
    moveWord<Word16>(move, args, i);
  else if (unitBytes(args) == sizeof(uint32_t))
    moveWord<uint32_t>(move, args, i);
  else
    moveWord<unsigned char>(move, args, i);
}

}  // namespace spccl::kernels::device_rows
