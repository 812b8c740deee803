// Registers the CPU codecs (quantize_cpu.cc) in the CPU kernel table.
#pragma once

#include "kernels/kernels.h"

namespace spccl::kernels {

void addCompressionKernels(KernelTable& table);

}  // namespace spccl::kernels
