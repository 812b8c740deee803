#include "api/api_guard.h"

#include "core/comm.h"
#include "core/comm_init.h"

namespace spccl {

spcclResult_t failCaught(const char* call, bool outOfMemory, const char* what) {
  if (outOfMemory) return SPCCL_FAIL(spcclSystemError, "%s: out of memory", call);
  return SPCCL_FAIL(spcclInternalError, "%s: %s", call, what);
}

spcclResult_t commReadyFor(spcclComm_t comm, const char* call) { return awaitCommInit(comm, call); }

CommCallScope::CommCallScope(spcclComm_t comm) : comm_(comm) {
  if (comm_ != nullptr) comm_->callsInFlight.fetch_add(1, std::memory_order_acq_rel);
}

CommCallScope::~CommCallScope() {
  if (comm_ != nullptr) comm_->callsInFlight.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace spccl
