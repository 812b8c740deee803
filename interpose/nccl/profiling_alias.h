// NCCL's profiling interface: every ncclX has a pncclX twin, so that a tool
// can define ncclX and call pncclX. Here pncclX is an alias of ncclX (the
// same code); use in the file that defines ncclX, after its definition.
#pragma once

#define SPCCL_NCCL_PROFILING_ALIAS(name) \
  extern "C" __typeof__(name) p##name __attribute__((alias(#name)));
