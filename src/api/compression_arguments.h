// Validation shared by every compressed entry point (the compressed
// all-reduce and the token top-k / mask all-reduces): the versioned cfg
// resolved into a quantizer spec, and the datatype/op the codecs accept.
// Messages name the argument and the calling function.
#pragma once

#include "compress/compressed_allreduce.h"
#include "spccl.h"

namespace spccl::compress {

// call->spec, schedule and residual from *cfg. Fields past cfg->size keep
// their defaults (an older, smaller struct), as spcclConfig_t and
// spcclSparseOptions_t. NULL cfg is an error here; callers for which it
// means "uncompressed" test for it first.
spcclResult_t resolveCompression(const spcclCompression* cfg, CompressedCall* call);

// f32/f16/bf16 and sum/avg only.
spcclResult_t checkCompressibleTypeAndOp(const char* name, spcclDataType_t type, spcclRedOp_t op);

// comm first, then the per-element byte size of count elements must fit.
spcclResult_t checkCommAndCount(const char* name, spcclComm_t comm, size_t count);

}  // namespace spccl::compress
