// The codecs of kernels.h in the CPU kernel table: codec_passes.h built
// twice, for the x86-64 baseline the library is compiled for (SSE2) and,
// through a target attribute, for AVX2, chosen once by the CPU at
// registration; where the CPU also has F16C, f16 tensors are converted by
// it (half_float_f16c.h) instead of by half_float.h's bit manipulation.
// Everything codec_passes.h runs per element is forced inline, so each
// entry point below holds its own vectorised copy. No FMA is used (the
// build's -ffp-contract=off, CMakeLists.txt): a fused v - m * level would
// round differently from the reference.
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "kernels/cpu/compress/codec_passes.h"
#include "kernels/cpu/compress/compress_cpu.h"
#include "kernels/cpu/compress/decoding_sum.h"
#include "kernels/cpu/compress/f32_runs.h"

namespace spccl::kernels {
namespace {

using codec_passes::LevelSource;
constexpr LevelSource Table = LevelSource::Table;
constexpr LevelSource Computed = LevelSource::Computed;

#if defined(__x86_64__) || defined(__i386__)
#define SPCCL_HAVE_AVX2_CODECS 1
#define SPCCL_TARGET_AVX2 __attribute__((target("avx2")))
#endif

// Codecs<Conversion> holds the entry points of one storage type
// (storage_conversions.h); dequantizeAdd is f32's. Decoders: the scalar
// table lookup wins on SSE2; under AVX2 the computed linear level (a
// conversion and a division) vectorises well, the piecewise one (finding
// the cluster) less so than a lookup (measured with perf/codec_throughput,
// docs/compressed.md).
template <typename Conversion>
struct BaselineCodecs {
  static void quantize(const QuantizerSpec& spec, const void* in, size_t count, unsigned char* out,
                       float* residual) {
    codec_passes::quantize<Conversion, codec_passes::ScalarPacker>(spec, in, count, out, residual);
  }
  static void dequantize(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                         void* out) {
    using Storage = typename Conversion::Storage;
    codec_passes::decode<codec_passes::ScalarPacker, Table, Table>(
        spec, in, count, codec_passes::StoreSink<Conversion>{static_cast<Storage*>(out)});
  }
  static void dequantizeAdd(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                            float* acc) {
    codec_passes::decode<codec_passes::ScalarPacker, Table, Table>(spec, in, count,
                                                                   codec_passes::AddSink{acc});
  }
  static void widenAdd(float* acc, const void* in, size_t count) {
    codec_passes::widenAdd<Conversion>(acc, in, count);
  }
  static void quantizeRun(const QuantizerSpec& spec, const F32Run& in, size_t count,
                          unsigned char* out) {
    codec_passes::quantizeSource<codec_passes::ScalarPacker>(
        spec, codec_passes::RunSource{in, count}, count, out);
  }
  static void dequantizeRun(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                            const F32Run& out) {
    codec_passes::decode<codec_passes::ScalarPacker, Table, Table>(spec, in, count,
                                                                   codec_passes::RunStoreSink{out});
  }
  static void dequantizeOnto(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                             const F32Run& base, float* acc) {
    codec_passes::decode<codec_passes::ScalarPacker, Table, Table>(
        spec, in, count, codec_passes::OntoSink{base, acc});
  }
  static void quantizeDecode(const QuantizerSpec& spec, const float* in, size_t count,
                             unsigned char* out, float* residual, const F32Run& decoded) {
    codec_passes::quantizeDecode<codec_passes::ScalarPacker>(spec, in, count, out, residual,
                                                             decoded);
  }
  static void reduceQuantizeDecode(const QuantizerSpec& spec, const F32Run& base,
                                   const unsigned char* const* decodings, int decodingCount,
                                   int divisor, size_t count, unsigned char* out, float* residual,
                                   const F32Run& decoded) {
    codec_passes::reduceQuantizeDecode<codec_passes::ScalarPacker, Table, Table>(
        spec, base, decodings, decodingCount, divisor, count, out, residual, decoded);
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

template <typename Conversion>
struct Avx2Codecs {
  SPCCL_TARGET_AVX2 static void quantize(const QuantizerSpec& spec, const void* in, size_t count,
                                         unsigned char* out, float* residual) {
    codec_passes::quantize<Conversion, Avx2Packer>(spec, in, count, out, residual);
  }
  SPCCL_TARGET_AVX2 static void dequantize(const QuantizerSpec& spec, const unsigned char* in,
                                           size_t count, void* out) {
    using Storage = typename Conversion::Storage;
    codec_passes::decode<Avx2Packer, kAvx2Piecewise, Computed>(
        spec, in, count, codec_passes::StoreSink<Conversion>{static_cast<Storage*>(out)});
  }
  SPCCL_TARGET_AVX2 static void dequantizeAdd(const QuantizerSpec& spec, const unsigned char* in,
                                              size_t count, float* acc) {
    codec_passes::decode<Avx2Packer, kAvx2Piecewise, Computed>(spec, in, count,
                                                               codec_passes::AddSink{acc});
  }
  SPCCL_TARGET_AVX2 static void widenAdd(float* acc, const void* in, size_t count) {
    codec_passes::widenAdd<Conversion>(acc, in, count);
  }
  SPCCL_TARGET_AVX2 static void quantizeRun(const QuantizerSpec& spec, const F32Run& in,
                                            size_t count, unsigned char* out) {
    codec_passes::quantizeSource<Avx2Packer>(spec, codec_passes::RunSource{in, count}, count, out);
  }
  SPCCL_TARGET_AVX2 static void dequantizeRun(const QuantizerSpec& spec, const unsigned char* in,
                                              size_t count, const F32Run& out) {
    codec_passes::decode<Avx2Packer, kAvx2Piecewise, Computed>(spec, in, count,
                                                               codec_passes::RunStoreSink{out});
  }
  SPCCL_TARGET_AVX2 static void dequantizeOnto(const QuantizerSpec& spec, const unsigned char* in,
                                               size_t count, const F32Run& base, float* acc) {
    codec_passes::decode<Avx2Packer, kAvx2Piecewise, Computed>(spec, in, count,
                                                               codec_passes::OntoSink{base, acc});
  }
  SPCCL_TARGET_AVX2 static void quantizeDecode(const QuantizerSpec& spec, const float* in,
                                               size_t count, unsigned char* out, float* residual,
                                               const F32Run& decoded) {
    codec_passes::quantizeDecode<Avx2Packer>(spec, in, count, out, residual, decoded);
  }
  SPCCL_TARGET_AVX2 static void reduceQuantizeDecode(const QuantizerSpec& spec, const F32Run& base,
                                                     const unsigned char* const* decodings,
                                                     int decodingCount, int divisor, size_t count,
                                                     unsigned char* out, float* residual,
                                                     const F32Run& decoded) {
    codec_passes::reduceQuantizeDecode<Avx2Packer, kAvx2Piecewise, Computed>(
        spec, base, decodings, decodingCount, divisor, count, out, residual, decoded);
  }
};
#endif

template <template <typename> class Codecs, typename Conversion>
void addType(KernelTable& table, spcclDataType_t type) {
  table.quantize[type] = Codecs<Conversion>::quantize;
  table.dequantize[type] = Codecs<Conversion>::dequantize;
  table.widenAdd[type] = Codecs<Conversion>::widenAdd;
}

// The variants differ in f16 only by HalfConversion.
template <template <typename> class Codecs, typename HalfConversion>
void addCodecs(KernelTable& table) {
  addType<Codecs, Float32Conversion>(table, spcclFloat32);
  addType<Codecs, HalfConversion>(table, spcclFloat16);
  addType<Codecs, ElementwiseConversion<Bfloat16Format>>(table, spcclBfloat16);
  table.dequantizeAdd = Codecs<Float32Conversion>::dequantizeAdd;
  table.quantizeRun = Codecs<Float32Conversion>::quantizeRun;
  table.dequantizeRun = Codecs<Float32Conversion>::dequantizeRun;
  table.dequantizeOnto = Codecs<Float32Conversion>::dequantizeOnto;
  table.quantizeDecode = Codecs<Float32Conversion>::quantizeDecode;
  table.reduceQuantizeDecode = Codecs<Float32Conversion>::reduceQuantizeDecode;
}

}  // namespace

bool codecVariantSupported(CodecVariant variant) {
  if (variant == CodecVariant::Baseline) return true;
#ifdef SPCCL_HAVE_AVX2_CODECS
  __builtin_cpu_init();  // in case a static constructor asks before libgcc's has run
  if (!__builtin_cpu_supports("avx2")) return false;
  if (variant == CodecVariant::Avx2) return true;
  // CPUID.1:ECX.F16C: clang 14's __builtin_cpu_supports knows no "f16c".
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
#else
  return false;
#endif
}

const char* codecVariantName(CodecVariant variant) {
  switch (variant) {
    case CodecVariant::Baseline:
      return "baseline";
    case CodecVariant::Avx2:
      return "avx2";
    case CodecVariant::Avx2F16c:
      return "avx2+f16c";
  }
  return "unknown";
}

CodecVariant fastestCodecVariant() {
  for (CodecVariant variant : {CodecVariant::Avx2F16c, CodecVariant::Avx2})
    if (codecVariantSupported(variant)) return variant;
  return CodecVariant::Baseline;
}

void addCompressionKernels(KernelTable& table, CodecVariant variant) {
#ifdef SPCCL_HAVE_AVX2_CODECS
  if (variant == CodecVariant::Avx2F16c) return addCodecs<Avx2Codecs, F16cHalfConversion>(table);
  if (variant == CodecVariant::Avx2)
    return addCodecs<Avx2Codecs, ElementwiseConversion<HalfFormat>>(table);
#endif
  addCodecs<BaselineCodecs, ElementwiseConversion<HalfFormat>>(table);
}

void addCompressionKernels(KernelTable& table) {
  addCompressionKernels(table, fastestCodecVariant());
}

}  // namespace spccl::kernels
