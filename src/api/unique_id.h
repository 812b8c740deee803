// Making a unique id whose rendezvous root runs in this process
// (spcclGetUniqueId, and the children of spcclCommSplit and
// spcclCommShrink).
#pragma once

#include "core/handshake.h"
#include "spccl.h"

namespace spccl {

// Its secret is random (256 bits), or, for a child communicator, derived
// from the parent's secret and the new id (`parent`), so that the id can
// travel between the members without its secret: every member derives it
// alike (deriveJobSecret).
spcclResult_t newUniqueId(const JobSecret* parent, spcclUniqueId* uniqueId);

}  // namespace spccl
