/* The name functions called the way C code may call them: with any int as
 * the enum argument. That is valid C; in C++, loading an out-of-range value
 * through the enum type is undefined (UBSan reports it), so the unit tests
 * reach the out-of-range cases through these. */
#include "spccl.h"

const char* sparseAlgorithmNameOfInt(int value) {
  return spcclSparseAlgorithmName((spcclSparseAlgorithm_t)value);
}
const char* sparseEncodingNameOfInt(int value) {
  return spcclSparseEncodingName((spcclSparseEncoding_t)value);
}
const char* sparsePartitionerNameOfInt(int value) {
  return spcclSparsePartitionerName((spcclSparsePartitioner_t)value);
}
const char* codecNameOfInt(int value) { return spcclCodecName((spcclCodec_t)value); }
const char* compressScheduleNameOfInt(int value) {
  return spcclCompressScheduleName((spcclCompressSchedule_t)value);
}
