// Measures the alpha (latency) and beta (seconds per byte) of the links a
// communicator uses, at creation, and makes every rank adopt the same
// values (the slowest link's), so algorithm choices agree across ranks.
#pragma once

#include "spccl.h"

struct spcclComm;

namespace spccl {

spcclResult_t profileLinks(spcclComm& comm);

}  // namespace spccl
