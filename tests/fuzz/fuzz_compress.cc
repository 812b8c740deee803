// The compressed block decoder (kernels/kernels.h, kernels/cpu/compress):
// the scales and packed codes a compressed all-reduce receives from its
// peers, decoded by dequantize, dequantizeAdd and dequantizeRun, in every
// variant this CPU runs, each of which must give the reference's bytes;
// and the configuration header the ranks exchange first
// (src/compress/configuration_agreement.h), described on any bytes.
// Input: [codec u8][bits u8][blockSize u16][count u16][type u8][blocks...].
#include <string>
#include <utility>
#include <vector>

#include "compress/configuration_agreement.h"
#include "fuzz_support.h"
#include "kernels/cpu/compress/compress_cpu.h"
#include "kernels/kernels.h"

using namespace spccl;
using namespace spccl::kernels;

namespace {

struct Tables {
  KernelTable reference{};
  std::vector<KernelTable> fast;
  Tables() {
    addReferenceCompressionKernels(reference);
    for (CodecVariant v : kCodecVariants) {
      if (!codecVariantSupported(v)) continue;
      KernelTable t{};
      addCompressionKernels(t, v);
      fast.push_back(t);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  if (size >= sizeof(compress::ConfigurationHeader)) {
    compress::ConfigurationHeader header;
    std::memcpy(&header, data, sizeof(header));
    SPCCL_FUZZ_CHECK(!header.describe().empty());
  }
  QuantizerSpec spec;
  spec.codec = (in.take<uint8_t>() & 1) ? Codec::Linear : Codec::Piecewise;
  spec.bits = kMinQuantizerBits + in.take<uint8_t>() % (kMaxQuantizerBits - kMinQuantizerBits + 1);
  spec.blockSize = 1 + in.take<uint16_t>() % 1024;
  size_t count = in.take<uint16_t>();
  static constexpr spcclDataType_t kTypes[] = {spcclFloat32, spcclFloat16, spcclBfloat16};
  const spcclDataType_t type = kTypes[in.take<uint8_t>() % 3];
  // The most elements the rest of the input encodes (a receive is sized by
  // quantizedBytes of the chunk's count, core/frame capacity).
  while (count > 0 && quantizedBytes(spec, count) > in.size()) count /= 2;
  if (count == 0) return 0;  // a chunk of no elements is never decoded
  const size_t bytes = quantizedBytes(spec, count);
  const std::vector<unsigned char> encoded = in.bytes(bytes);
  SPCCL_FUZZ_CHECK(encoded.size() == bytes);

  const Tables& t = tables();
  const size_t elementBytes = spcclTypeSize(type);
  std::vector<unsigned char> expected(count * elementBytes);
  t.reference.dequantize[type](spec, encoded.data(), count, expected.data());
  std::vector<float> expectedAcc(count, 1.0f);
  t.reference.dequantizeAdd(spec, encoded.data(), count, expectedAcc.data());
  for (const KernelTable& fast : t.fast) {
    std::vector<unsigned char> out(count * elementBytes);
    fast.dequantize[type](spec, encoded.data(), count, out.data());
    SPCCL_FUZZ_CHECK(out == expected);
    std::vector<float> acc(count, 1.0f);
    fast.dequantizeAdd(spec, encoded.data(), count, acc.data());
    SPCCL_FUZZ_CHECK(std::memcmp(acc.data(), expectedAcc.data(), count * sizeof(float)) == 0);
    if (type == spcclFloat32 && fast.dequantizeRun != nullptr) {
      // The same elements written as a run of rows (token top-k's kept rows).
      const size_t hidden = 1 + count % 7;
      const size_t rowsNeeded = (count + hidden - 1) / hidden;
      std::vector<size_t> rows(rowsNeeded);
      for (size_t r = 0; r < rowsNeeded; ++r) rows[r] = rowsNeeded - 1 - r;
      std::vector<float> tensor(rowsNeeded * hidden, 0.0f);
      F32Run run{tensor.data(), rows.data(), hidden, 0};
      fast.dequantizeRun(spec, encoded.data(), count, run);
      for (size_t i = 0; i < count; ++i)
        SPCCL_FUZZ_CHECK(std::memcmp(&tensor[rows[i / hidden] * hidden + i % hidden],
                                     expected.data() + i * sizeof(float), sizeof(float)) == 0);
    }
  }
  return 0;
}
