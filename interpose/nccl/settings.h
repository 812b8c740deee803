// The NCCL interposer's knobs, read once per process (declared with the
// others in src/base/knobs.cc): SPCCL_NCCL_MODE, SPCCL_NCCL_LIB (real_nccl.cc),
// SPCCL_NCCL_SPARSE, SPCCL_NCCL_COMPRESS, SPCCL_NCCL_DEVICE_DENSITY,
// SPCCL_INTERPOSE_MIN_BYTES and SPCCL_INTERPOSE_REPORT. Set them the same on every rank: the
// routing reads them.
#pragma once

#include <cstddef>
#include <string>

#include "spccl.h"

namespace spccl::nccl {

enum class Mode {
  Forward,  // every communicator is also a real NCCL one; NCCL gets what spccl does not take
  Replace,  // spccl serves every call (host buffers)
};
const char* modeName(Mode mode);

// SPCCL_NCCL_COMPRESS: "off", or CODEC:BITS[:SCHEDULE[:BLOCK]] with CODEC
// piecewise|linear, BITS 2..8, SCHEDULE twoshot|ring, BLOCK elements per
// scale (0: spccl's default).
struct CompressSetting {
  bool enabled = false;
  spcclCodec_t codec = spcclCodecPiecewise;
  int bits = 4;
  spcclCompressSchedule_t schedule = spcclCompressTwoShot;
  size_t blockSize = 0;
};
// False (and *error says why) for text that is neither off nor a setting.
bool parseCompressSetting(const std::string& text, CompressSetting* out, std::string* error);
std::string describe(const CompressSetting& setting);  // "off", "piecewise:4:twoshot:256"

// SPCCL_NCCL_DEVICE_DENSITY's value: a number in [0, 1]; false otherwise.
bool parseDensity(const std::string& text, double* out);

struct Settings {
  Mode mode = Mode::Forward;  // in effect: forward falls back to replace without a real NCCL
  size_t minBytes = 65536;
  bool sparse = true;
  CompressSetting compress;
  // SPCCL_NCCL_DEVICE_DENSITY: forward mode, device buffers: the largest
  // agreed density (nonzero fraction of a sample) that goes to spccl's
  // sparse all-reduce; 0: none do.
  double deviceDensity = 0;
  bool report = false;
};

// Reads the knobs at the first call (and, in forward mode, loads the real
// NCCL: real_nccl.h); logs the outcome at INFO and bad values at WARN.
const Settings& settings();

}  // namespace spccl::nccl
