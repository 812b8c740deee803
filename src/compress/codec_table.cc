#include "compress/codec_table.h"

#include <iterator>

namespace spccl::compress {

namespace {

const CodecInfo kCodecs[] = {
    {spcclCodecPiecewise, kernels::Codec::Piecewise, "piecewise",
     "AccTFM Eq. (6)-(12): finer steps near zero"},
    {spcclCodecLinear, kernels::Codec::Linear, "linear", "AccTFM Eq. (4)-(5): equal steps"},
};
static_assert(std::size(kCodecs) == spcclNumCodecs);

}  // namespace

std::span<const CodecInfo> codecs() { return kCodecs; }

const char* codecName(spcclCodec_t codec) {
  for (const CodecInfo& c : kCodecs)
    if (c.id == codec) return c.name;
  return "unknown";
}

const char* codecName(kernels::Codec codec) {
  for (const CodecInfo& c : kCodecs)
    if (c.codec == codec) return c.name;
  return "unknown";
}

}  // namespace spccl::compress
