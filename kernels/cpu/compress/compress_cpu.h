// Registers the CPU codecs in the CPU kernel table.
#pragma once

#include "kernels/kernels.h"

namespace spccl::kernels {

// The fast codecs (quantize_cpu.cc) come in one source built twice: for the
// x86-64 baseline (SSE2) and for AVX2, picked at run time by the CPU. Both
// give the same bytes as the reference (quantize_reference.cc).
enum class CodecVariant { Baseline, Avx2 };

bool codecVariantSupported(CodecVariant variant);
// The fastest variant the CPU runs, plus widenAdd.
void addCompressionKernels(KernelTable& table);
// One variant (tests, perf/codec_throughput); it must be supported.
void addCompressionKernels(KernelTable& table, CodecVariant variant);
// The scalar codecs the fast ones must match byte for byte (quantize,
// dequantize, dequantizeAdd; no widenAdd).
void addReferenceCompressionKernels(KernelTable& table);

}  // namespace spccl::kernels
