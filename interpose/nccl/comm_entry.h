// The first lines shared by the entry points that take a communicator:
// find spccl's communicator behind an ncclComm_t, or hand the call to the
// real NCCL in forward mode.
#pragma once

#include "errors.h"
#include "interposed_comm.h"
#include "real_nccl.h"
#include "settings.h"

namespace spccl::nccl {

// Forward mode in effect (it falls back to replace without a real NCCL).
inline bool forwarding() { return settings().mode == Mode::Forward; }

}  // namespace spccl::nccl

// The communicator behind comm; otherwise, forward mode hands the call to
// the real NCCL (a real communicator, or NULL: its answer), and replace
// mode fails it.
#define SPCCL_FIND_COMM(mine, comm, call, name, ...)                                       \
  const ::spccl::nccl::CommLease mine##Lease = ::spccl::nccl::leaseComm(comm);             \
  ::spccl::nccl::InterposedComm* mine = mine##Lease.get();                                 \
  if (mine == nullptr) {                                                                   \
    if (::spccl::nccl::forwarding())                                                       \
      return SPCCL_FORWARD(::spccl::nccl::realNccl(), name, __VA_ARGS__);                  \
    return ::spccl::nccl::fail(                                                            \
        nullptr, ncclInvalidArgument, "%s: comm %p is %s", call, static_cast<void*>(comm), \
        comm == nullptr ? "NULL" : "not a communicator of libspccl_nccl.so");              \
  }

// In forward mode the real communicator's answer, else ours.
#define SPCCL_REAL_OR(name, ...)   \
  if (::spccl::nccl::forwarding()) \
  return SPCCL_FORWARD(::spccl::nccl::realNccl(), name, __VA_ARGS__)
