// How a compressed all-reduce cuts the tensor into one chunk per rank:
// whole quantization blocks only (the last chunk takes the short tail
// block), so every block lies in one chunk and block b covers elements
// [b*blockSize, (b+1)*blockSize) of the tensor whichever rank encodes it.
// That makes the error bound a per-block statement about the inputs
// (docs/compressed.md) independent of n.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/kernels.h"

namespace spccl::compress {

struct ChunkLayout {
  size_t count = 0;
  size_t blockSize = 1;
  int nranks = 1;

  size_t blocks() const { return (count + blockSize - 1) / blockSize; }
  // Blocks spread evenly: the first blocks() % n chunks get one more.
  size_t firstBlock(int chunk) const {
    const size_t c = static_cast<size_t>(chunk), n = static_cast<size_t>(nranks);
    return c * (blocks() / n) + std::min(c, blocks() % n);
  }
  size_t begin(int chunk) const { return std::min(count, firstBlock(chunk) * blockSize); }
  size_t end(int chunk) const { return std::min(count, firstBlock(chunk + 1) * blockSize); }
  size_t length(int chunk) const { return end(chunk) - begin(chunk); }
  size_t encodedBytes(const kernels::QuantizerSpec& spec, int chunk) const {
    return kernels::quantizedBytes(spec, length(chunk));
  }
};

}  // namespace spccl::compress
