// NCCL's profiling interface: every ncclX has a pncclX twin, so that a tool
// can define ncclX and call pncclX. Here pncclX is an alias of ncclX (the
// same code); use in the file that defines ncclX, after its definition.
#pragma once

#define SPCCL_NCCL_PROFILING_ALIAS(name) \
  extern "C" __typeof__(name) p##name __attribute__((alias(#name)));

// The same for a name C++ overloads (NCCL's Team API has device-side
// twins), whose type __typeof__ cannot take: result and (parameters) given.
#define SPCCL_NCCL_PROFILING_ALIAS_OF_TYPE(name, result, parameters) \
  extern "C" result p##name parameters __attribute__((alias(#name)));
