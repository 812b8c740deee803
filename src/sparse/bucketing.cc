#include "sparse/bucketing.h"

#include "sparse/bucketing_methods.h"

namespace spccl::sparse {

void bucketByOwner(BucketMethod method, const IndexPartition& partition, spcclDataType_t type,
                   const uint64_t* indices, const void* values, size_t nnz, Buckets* out) {
  const size_t valueBytes = spcclTypeSize(type);
  if (method == BucketMethod::HierarchicalHash) {
    hierarchicalHashBucketing(partition, valueBytes, indices, values, nnz,
                              HierarchicalHashOptions{}, out);
  } else {
    twoPassBucketing(partition, valueBytes, indices, values, nnz, out);
  }
}

}  // namespace spccl::sparse
