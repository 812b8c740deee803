// The data check (-c 1): reference inputs in, poisoned outputs, and a
// count of the elements that differ from the reference afterwards.
#pragma once

#include <cstdint>

#include "common/collective_spec.h"
#include "common/element_codec.h"

namespace spccl::perf {

// Writes 0 over this rank's receive elements (no reference value is 0, so
// an element the collective never wrote counts as wrong), then the
// reference inputs into its send elements. In place the send elements lie
// inside the receive buffer, hence this order.
void prepareCheckBuffers(const ElementCodec& codec, const CheckContext& context, void* sendBuffer,
                         void* recvBuffer);

// Receive elements that differ from spec.expected; 0 on a rank whose
// result the collective leaves undefined.
int64_t countWrongElements(const CollectiveSpec& spec, const ElementCodec& codec,
                           const CheckContext& context, const void* recvBuffer);

}  // namespace spccl::perf
