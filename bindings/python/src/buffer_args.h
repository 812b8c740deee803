// The binding's buffer and enum arguments as they cross from Python: data
// pointers arrive as integers (the Python side checked them), dtypes and
// ops as their enum values.
#pragma once

#include <cstdint>

#include "spccl.h"

namespace spccl_python {

inline const void* in(uintptr_t address) { return reinterpret_cast<const void*>(address); }
inline void* out(uintptr_t address) { return reinterpret_cast<void*>(address); }
inline spcclDataType_t type(int dtype) { return static_cast<spcclDataType_t>(dtype); }
inline spcclRedOp_t redOp(int op) { return static_cast<spcclRedOp_t>(op); }

}  // namespace spccl_python
