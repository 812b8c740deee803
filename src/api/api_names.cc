// The names of the enumerators, from the tables that register them
// (src/sparse, src/compress): the C API's copy of what logs print. A
// caller may pass any int, so each value is range-checked through its
// bytes (base/enum_args.h) before the tables compare it.
#include "base/enum_args.h"
#include "compress/codec_table.h"
#include "compress/schedule_table.h"
#include "sparse/encoding.h"
#include "sparse/partitioner_table.h"
#include "sparse/sparse_algorithm_table.h"
#include "spccl.h"

namespace {

constexpr const char* kUnknown = "unknown";

}  // namespace

extern "C" {

const char* spcclSparseAlgorithmName(spcclSparseAlgorithm_t algorithm) {
  if (!spccl::validEnum(algorithm, spcclSparseNumAlgorithms)) return kUnknown;
  return spccl::sparse::sparseAlgorithmName(algorithm);
}

const char* spcclSparseEncodingName(spcclSparseEncoding_t encoding) {
  if (!spccl::validEnum(encoding, spcclNumEncodings)) return kUnknown;
  return spccl::sparse::sparseEncodingName(encoding);
}

const char* spcclSparsePartitionerName(spcclSparsePartitioner_t partitioner) {
  if (!spccl::validEnum(partitioner, spcclNumPartitioners)) return kUnknown;
  return spccl::sparse::sparsePartitionerName(partitioner);
}

const char* spcclCodecName(spcclCodec_t codec) {
  if (!spccl::validEnum(codec, spcclNumCodecs)) return kUnknown;
  return spccl::compress::codecName(codec);
}

const char* spcclCompressScheduleName(spcclCompressSchedule_t schedule) {
  if (!spccl::validEnum(schedule, spcclNumCompressSchedules)) return kUnknown;
  return spccl::compress::compressScheduleName(schedule);
}

}  // extern "C"
