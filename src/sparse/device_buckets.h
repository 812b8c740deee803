// Balanced Parallelism's push buckets from the pairs the device sparse
// call extracted on the GPU (issue 16; kernels/device_sparse/bucket_pairs.h,
// docs/gpu.md "Sparse all-reduce of device buffers"), handed to the
// schedule through SparseCall::bucketer so that the host skips
// bucketByOwner and the sort of each bucket by position.
#pragma once

#include <string>

#include "sparse/bucketing.h"
#include "sparse/device_nonzeros.h"
#include "spccl.h"

namespace spccl::sparse {

// The bucket kernels' image is in this build (CUDA at build time).
bool bucketKernelsPresent();
// Loads them in the current context (DeviceNonZeros::loadKernels).
spcclResult_t loadBucketKernels();

// DeviceNonZeros::bucketPairs as a PairBucketer; `pairs` must have written
// its pairs on the device (writePairs) and outlive the call. Where the
// device fails, bucket() returns false and Balanced Parallelism buckets the
// same pairs on the host (fetched from the call's PairSource), so that this
// rank still feeds its peers the call's messages; the failure is kept for
// the call to return once its part is done (failure(), why()): the peers
// finish, this rank reports the driver's error.
class DevicePairBucketer final : public PairBucketer {
 public:
  // rankTiles: the communicator's ZenHash rank tiles (device_rank_tiles.h).
  DevicePairBucketer(DeviceNonZeros& pairs, spcclDataType_t type, size_t nnz,
                     DeviceRankTiles* rankTiles)
      : pairs_(pairs), type_(type), nnz_(nnz), rankTiles_(rankTiles) {}
  bool bucket(const IndexPartition& partition, Buckets* out, bool* sorted) override;
  spcclResult_t failure() const { return failure_; }
  const std::string& why() const { return why_; }
  // The device made the buckets (none of the host's fallback), and the
  // bytes their copies brought to the host: for the staging report.
  bool bucketedOnDevice() const { return bucketedOnDevice_; }
  size_t bytesToHost() const { return bytesToHost_; }

 private:
  DeviceNonZeros& pairs_;
  spcclDataType_t type_;
  size_t nnz_;
  DeviceRankTiles* rankTiles_;
  spcclResult_t failure_ = spcclSuccess;
  std::string why_;
  bool bucketedOnDevice_ = false;
  size_t bytesToHost_ = 0;
};

}  // namespace spccl::sparse
