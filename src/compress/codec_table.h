// Every spcclCodec_t, registered once: its name (logs, the configuration
// agreement's messages, the perf binaries' -m flag, spcclCodecName) and
// the kernels' quantizer behind it.
#pragma once

#include <span>

#include "kernels/kernels.h"
#include "spccl.h"

namespace spccl::compress {

struct CodecInfo {
  spcclCodec_t id;
  kernels::Codec codec;
  const char* name;
  const char* description;
};

std::span<const CodecInfo> codecs();
// "piecewise", "linear"; "unknown" for a value without a row.
const char* codecName(spcclCodec_t codec);
const char* codecName(kernels::Codec codec);

}  // namespace spccl::compress
