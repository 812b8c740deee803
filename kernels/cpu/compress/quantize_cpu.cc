// The codecs of kernels.h in the CPU kernel table: codec_passes.h built
// twice, for the x86-64 baseline the library is compiled for (SSE2) and,
// through a target attribute, for AVX2, chosen once by the CPU at
// registration. Everything codec_passes.h runs per element is forced
// inline, so each entry point below holds its own vectorised copy.
// No FMA is enabled: a fused v - m * level would round differently from
// the reference.
#include "kernels/cpu/compress/codec_passes.h"
#include "kernels/cpu/compress/compress_cpu.h"

namespace spccl::kernels {
namespace {

using codec_passes::LevelSource;
constexpr LevelSource Table = LevelSource::Table;
constexpr LevelSource Computed = LevelSource::Computed;

#if defined(__x86_64__) || defined(__i386__)
#define SPCCL_HAVE_AVX2_CODECS 1
#define SPCCL_TARGET_AVX2 __attribute__((target("avx2")))
#endif

// Decoders: the scalar table lookup wins on SSE2; under AVX2 the computed
// linear level (a conversion and a division) vectorises well, the piecewise
// one (finding the cluster) less so than a lookup (measured with
// perf/codec_throughput, docs/compressed.md).
template <typename Format>
struct BaselineCodecs {
  static void quantize(const QuantizerSpec& spec, const void* in, size_t count, unsigned char* out,
                       float* residual) {
    codec_passes::quantize<Format, codec_passes::ScalarPacker>(spec, in, count, out, residual);
  }
  static void dequantize(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                         void* out) {
    using Storage = typename Format::Storage;
    codec_passes::decode<codec_passes::ScalarPacker, Table, Table>(
        spec, in, count, codec_passes::StoreSink<Format>{static_cast<Storage*>(out)});
  }
  static void dequantizeAdd(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                            float* acc) {
    codec_passes::decode<codec_passes::ScalarPacker, Table, Table>(spec, in, count,
                                                                   codec_passes::AddSink{acc});
  }
};

#ifdef SPCCL_HAVE_AVX2_CODECS
struct Avx2Packer {
  static void pack(const uint8_t* codes, size_t count, int bits, unsigned char* out) {
    packCodesAvx2(codes, count, bits, out);
  }
  static void unpack(const unsigned char* in, size_t count, int bits, uint8_t* codes) {
    unpackCodesAvx2(in, count, bits, codes);
  }
};

constexpr LevelSource kAvx2Piecewise = Table;

template <typename Format>
struct Avx2Codecs {
  SPCCL_TARGET_AVX2 static void quantize(const QuantizerSpec& spec, const void* in, size_t count,
                                         unsigned char* out, float* residual) {
    codec_passes::quantize<Format, Avx2Packer>(spec, in, count, out, residual);
  }
  SPCCL_TARGET_AVX2 static void dequantize(const QuantizerSpec& spec, const unsigned char* in,
                                           size_t count, void* out) {
    using Storage = typename Format::Storage;
    codec_passes::decode<Avx2Packer, kAvx2Piecewise, Computed>(
        spec, in, count, codec_passes::StoreSink<Format>{static_cast<Storage*>(out)});
  }
  SPCCL_TARGET_AVX2 static void dequantizeAdd(const QuantizerSpec& spec, const unsigned char* in,
                                              size_t count, float* acc) {
    codec_passes::decode<Avx2Packer, kAvx2Piecewise, Computed>(spec, in, count,
                                                               codec_passes::AddSink{acc});
  }
};
#endif

template <typename Format>
void widenAdd(float* acc, const void* input, size_t count) {
  const auto* in = static_cast<const typename Format::Storage*>(input);
  for (size_t i = 0; i < count; ++i) acc[i] += Format::load(in[i]);
}

template <template <typename> class Codecs>
void addCodecs(KernelTable& table) {
  table.quantize[spcclFloat32] = Codecs<NativeFormat<float>>::quantize;
  table.quantize[spcclFloat16] = Codecs<HalfFormat>::quantize;
  table.quantize[spcclBfloat16] = Codecs<Bfloat16Format>::quantize;
  table.dequantize[spcclFloat32] = Codecs<NativeFormat<float>>::dequantize;
  table.dequantize[spcclFloat16] = Codecs<HalfFormat>::dequantize;
  table.dequantize[spcclBfloat16] = Codecs<Bfloat16Format>::dequantize;
  table.dequantizeAdd = Codecs<NativeFormat<float>>::dequantizeAdd;
  table.widenAdd[spcclFloat32] = widenAdd<NativeFormat<float>>;
  table.widenAdd[spcclFloat16] = widenAdd<HalfFormat>;
  table.widenAdd[spcclBfloat16] = widenAdd<Bfloat16Format>;
}

}  // namespace

bool codecVariantSupported(CodecVariant variant) {
  if (variant == CodecVariant::Baseline) return true;
#ifdef SPCCL_HAVE_AVX2_CODECS
  __builtin_cpu_init();  // in case a static constructor asks before libgcc's has run
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

void addCompressionKernels(KernelTable& table, CodecVariant variant) {
#ifdef SPCCL_HAVE_AVX2_CODECS
  if (variant == CodecVariant::Avx2) return addCodecs<Avx2Codecs>(table);
#endif
  addCodecs<BaselineCodecs>(table);
}

void addCompressionKernels(KernelTable& table) {
  addCompressionKernels(table, codecVariantSupported(CodecVariant::Avx2) ? CodecVariant::Avx2
                                                                         : CodecVariant::Baseline);
}

}  // namespace spccl::kernels
