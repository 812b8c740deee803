// Version-1 transport plugins under the version-2 ABI: a v1 table is run
// as a transport with exactly one device (include/spccl_net.h).
#pragma once

#include "spccl_net.h"

namespace spccl {

// A v2 table that forwards to `table`, or NULL when every adapter slot is
// taken (far more v1 plugins than one process loads).
const spcclNet_v2_t* adaptNetV1(const spcclNet_v1_t* table);

}  // namespace spccl
