// spcclCompression from the fields the Python layer passes (it has checked
// them; spccl checks again): shared by the compressed all-reduce and the
// token top-k bindings. residual is an address, 0 for no error feedback.
#pragma once

#include <cstddef>
#include <cstdint>

#include "spccl.h"

namespace spccl_python {

inline spcclCompression makeCompression(int codec, int bits, size_t blockSize, int schedule,
                                        uintptr_t residual) {
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.codec = static_cast<spcclCodec_t>(codec);
  cfg.bits = bits;
  cfg.blockSize = blockSize;
  cfg.schedule = static_cast<spcclCompressSchedule_t>(schedule);
  cfg.residual = reinterpret_cast<float*>(residual);
  return cfg;
}

}  // namespace spccl_python
