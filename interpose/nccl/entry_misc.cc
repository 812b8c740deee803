// Entry points without a communicator, and the PreMulSum ops: version,
// unique id, error strings, last error, memory, debug reset.
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <set>
#include <string>

#include "base/log.h"
#include "comm_entry.h"
#include "entry_guard.h"
#include "errors.h"
#include "interposed_comm.h"
#include "memory_kind.h"
#include "premul_sum.h"
#include "profiling_alias.h"
#include "real_nccl.h"
#include "routing.h"
#include "settings.h"
#include "unique_id.h"

using namespace spccl::nccl;

namespace {

// ncclMemAlloc in replace mode: device memory of the current CUDA context
// where there is one (NCCL's answer: a program such as PyTorch's allocator
// hands it to kernels), else page-aligned host memory; remembered so that
// ncclMemFree can tell its own pointers from others.
struct HostAllocations {
  std::mutex mutex;
  std::set<void*> pointers;
  std::set<void*> devicePointers;
};
HostAllocations& hostAllocations() {
  static auto* a = new HostAllocations;  // never destroyed: frees may come during exit
  return *a;
}

// Records memory as ncclMemAlloc's. Where the record cannot be made
// (memory ran out) the memory is freed again and the failure goes on to
// the call's guard, so that the failed call leaks nothing.
void rememberAllocation(void* memory, bool device) {
  HostAllocations& a = hostAllocations();
  try {
    std::lock_guard<std::mutex> lock(a.mutex);
    (device ? a.devicePointers : a.pointers).insert(memory);
  } catch (const std::bad_alloc&) {
    std::string ignored;
    if (device)
      freeDeviceMemory(memory, &ignored);
    else
      std::free(memory);
    throw;
  }
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(GetVersion, version);
    if (forwarding()) return SPCCL_FORWARD(realNccl(), GetVersion, version);
    if (version == nullptr)
      return fail(nullptr, ncclInvalidArgument, "ncclGetVersion: version is NULL");
    *version = NCCL_VERSION_CODE;  // the API this library implements
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclGetVersion)

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(GetUniqueId, uniqueId);
    settings();
    if (uniqueId == nullptr)
      return fail(nullptr, ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
    spcclUniqueId id;
    const ncclResult_t r = finishSpccl(nullptr, spcclGetUniqueId(&id));
    if (r == ncclSuccess) *uniqueId = packUniqueId(id);
    return r;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclGetUniqueId)

const char* ncclGetErrorString(ncclResult_t result) {
  return guardEntryOr<const char*>(__func__, spcclErrorString(result), [&]() -> const char* {
    if (insideRealNccl() || forwarding()) {
      const RealNccl* real = realNccl();
      if (real->GetErrorString != nullptr) return callReal(real->GetErrorString, result);
    }
    return spcclErrorString(result);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclGetErrorString)

const char* ncclGetLastError(ncclComm_t comm) {
  return guardEntryOr<const char*>(__func__, threadLastError(), [&]() -> const char* {
    const RealNccl* real = insideRealNccl() || forwarding() ? realNccl() : nullptr;
    if (insideRealNccl() && real->GetLastError != nullptr)
      return callReal(real->GetLastError, comm);
    const CommLease lease = leaseComm(comm);
    InterposedComm* mine = lease.get();
    if (mine != nullptr) {
      {
        std::lock_guard<std::mutex> lock(mine->mutex);
        if (mine->lastErrorFromSpccl || real == nullptr || real->GetLastError == nullptr)
          return mine->lastError;  // valid until the communicator's next failure
      }
      return callReal(real->GetLastError, mine->real);
    }
    if (comm == nullptr &&
        (threadFailedInSpccl() || real == nullptr || real->GetLastError == nullptr))
      return threadLastError();
    // A real communicator, or the real NCCL's own latest failure.
    return real != nullptr && real->GetLastError != nullptr ? callReal(real->GetLastError, comm)
                                                            : threadLastError();
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclGetLastError)

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void ncclResetDebugInit() {
  guardEntryOr(__func__, 0, [&] {
    if (!insideRealNccl()) spccl::logReconfigure();
    if (insideRealNccl() || forwarding()) {
      const RealNccl* real = realNccl();
      if (real->ResetDebugInit != nullptr) callReal(real->ResetDebugInit);
    }
    return 0;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclResetDebugInit)
#pragma GCC diagnostic pop

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(MemAlloc, ptr, size);
    if (forwarding()) return SPCCL_FORWARD(realNccl(), MemAlloc, ptr, size);
    if (ptr == nullptr) return fail(nullptr, ncclInvalidArgument, "ncclMemAlloc: ptr is NULL");
    void* memory = nullptr;
    if (currentCudaContext() != nullptr) {
      std::string error;
      if (!allocateDeviceMemory(&memory, size, &error))
        return fail(nullptr, ncclUnhandledCudaError, "ncclMemAlloc: %zu bytes of device memory: %s",
                    size, error.c_str());
      rememberAllocation(memory, /*device=*/true);
      *ptr = memory;
      return ncclSuccess;
    }
    if (posix_memalign(&memory, 4096, size > 0 ? size : 1) != 0)
      return fail(nullptr, ncclSystemError, "ncclMemAlloc: %zu bytes of host memory: out of memory",
                  size);
    rememberAllocation(memory, /*device=*/false);
    *ptr = memory;
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclMemAlloc)

ncclResult_t ncclMemFree(void* ptr) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(MemFree, ptr);
    if (forwarding()) return SPCCL_FORWARD(realNccl(), MemFree, ptr);
    if (ptr == nullptr) return ncclSuccess;
    HostAllocations& a = hostAllocations();
    bool device = false;
    {
      std::lock_guard<std::mutex> lock(a.mutex);
      device = a.devicePointers.erase(ptr) > 0;
      if (!device && a.pointers.erase(ptr) == 0)
        return fail(nullptr, ncclInvalidArgument,
                    "ncclMemFree: %p was not allocated by ncclMemAlloc", ptr);
    }
    if (device) {
      std::string error;
      if (!freeDeviceMemory(ptr, &error))
        return fail(nullptr, ncclUnhandledCudaError, "ncclMemFree: %p: %s", ptr, error.c_str());
      return ncclSuccess;
    }
    std::free(ptr);
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclMemFree)

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(RedOpCreatePreMulSum, op, scalar, datatype, residence, comm);
    const CommLease lease = leaseComm(comm);
    InterposedComm* mine = lease.get();
    if (forwarding())
      return SPCCL_FORWARD(realNccl(), RedOpCreatePreMulSum, op, scalar, datatype, residence,
                           mine != nullptr ? mine->real : comm);
    const char* call = "ncclRedOpCreatePreMulSum";
    if (mine == nullptr)
      return fail(nullptr, ncclInvalidArgument, "%s: comm %p is not a communicator of spccl", call,
                  static_cast<void*>(comm));
    if (op == nullptr || scalar == nullptr)
      return fail(mine, ncclInvalidArgument, "%s: op %p, scalar %p", call, static_cast<void*>(op),
                  scalar);
    if (!scalable(datatype))
      return fail(mine, ncclInvalidArgument, "%s: datatype %d has no spccl twin", call,
                  static_cast<int>(datatype));
    PreMulSumOp created;
    created.datatype = datatype;
    if (residence == ncclScalarHostImmediate) {
      std::memcpy(created.value, scalar, elementSize(datatype));
    } else if (residence == ncclScalarDevice) {
      created.pointer = scalar;  // read at every call
    } else {
      return fail(mine, ncclInvalidArgument, "%s: residence %d is not an ncclScalarResidence_t",
                  call, static_cast<int>(residence));
    }
    *op = mine->preMulSumOps.create(created);
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclRedOpCreatePreMulSum)

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(RedOpDestroy, op, comm);
    const CommLease lease = leaseComm(comm);
    InterposedComm* mine = lease.get();
    if (forwarding())
      return SPCCL_FORWARD(realNccl(), RedOpDestroy, op, mine != nullptr ? mine->real : comm);
    if (mine == nullptr)
      return fail(nullptr, ncclInvalidArgument,
                  "ncclRedOpDestroy: comm %p is not a communicator of spccl",
                  static_cast<void*>(comm));
    if (!mine->preMulSumOps.destroy(op))
      return fail(mine, ncclInvalidArgument,
                  "ncclRedOpDestroy: op %d was not made by ncclRedOpCreatePreMulSum on this "
                  "communicator",
                  static_cast<int>(op));
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclRedOpDestroy)

}  // extern "C"
