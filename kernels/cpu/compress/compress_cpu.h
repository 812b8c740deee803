// Registers the CPU codecs in the CPU kernel table.
#pragma once

#include "kernels/kernels.h"

namespace spccl::kernels {

// The fast codecs (quantize_cpu.cc) come in one source built twice: for the
// x86-64 baseline (SSE2) and for AVX2, picked at run time by the CPU, the
// AVX2 build with f16 converted either by half_float.h or, where the CPU
// has it, by F16C. All give the same bytes as the reference
// (quantize_reference.cc).
enum class CodecVariant { Baseline, Avx2, Avx2F16c };
constexpr CodecVariant kCodecVariants[] = {CodecVariant::Baseline, CodecVariant::Avx2,
                                           CodecVariant::Avx2F16c};

bool codecVariantSupported(CodecVariant variant);
// "baseline", "avx2", "avx2+f16c" (perf/codec_throughput's -v, spccl_info).
const char* codecVariantName(CodecVariant variant);
// The variant cpuKernels() holds: the last of kCodecVariants the CPU runs.
CodecVariant fastestCodecVariant();
// The fastest variant the CPU runs (codecs and widenAdd).
void addCompressionKernels(KernelTable& table);
// One variant (tests, perf/codec_throughput); it must be supported.
void addCompressionKernels(KernelTable& table, CodecVariant variant);
// The scalar codecs the fast ones must match byte for byte (quantize,
// dequantize, dequantizeAdd; no widenAdd).
void addReferenceCompressionKernels(KernelTable& table);

}  // namespace spccl::kernels
