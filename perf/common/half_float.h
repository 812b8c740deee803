// IEEE binary16 and bfloat16 <-> float on the host, round to nearest even.
// The compiler's _Float16/__bf16 are not available everywhere g++ 12 runs.
#pragma once

#include <cstdint>

namespace spccl::perf {

float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bfloat16ToFloat(uint16_t bits);
uint16_t floatToBfloat16(float value);

}  // namespace spccl::perf
