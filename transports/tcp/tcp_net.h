// The built-in tcp transport: one TCP connection per send/recv comm pair,
// messages framed as [u64 little-endian length][payload].
#pragma once

#include "spccl_net.h"

extern "C" const spcclNet_v2_t* spcclNetTcp();
