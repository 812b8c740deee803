#include "core/device_sparse_call.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/knobs.h"
#include "core/comm.h"
#include "device/pinned_pool.h"
#include "kernels/device_sparse/extract_nonzeros.h"
#include "sparse/comm_state.h"
#include "sparse/device_buckets.h"
#include "sparse/device_nonzeros.h"
#include "sparse/device_rank_tiles.h"
#include "sparse/pair_source.h"

namespace spccl {

using sparse::DeviceNonZeros;
using sparse::SparseCall;

// Pinned host memory of the call's size (count elements), the most the
// call needs: pairs are used only where they are smaller, so it holds the
// input's pairs or the whole input, then the result's pairs. The CPU's
// call writes no dense host output where its result comes as pairs
// (sparse::SparseResult).
struct DeviceSparsePlan {
  device::CuStream stream = nullptr;
  device::PinnedBuffer input;
};

namespace {

namespace ds = kernels::device_sparse;

// The pairs' index width: ds::indexBytesFor(count), or 8 where the
// test-only knob SPCCL_DEVICE_SPARSE_INDEX_BYTES=8 forces it (the only way
// to run the 64-bit path below 2^32 elements).
size_t pairIndexBytes(size_t count) {
  return knobInt("SPCCL_DEVICE_SPARSE_INDEX_BYTES") == 8 ? sizeof(uint64_t)
                                                         : ds::indexBytesFor(count);
}

spcclResult_t acquire(size_t bytes, device::PinnedBuffer* out) {
  return device::acquirePinned(std::max<size_t>(bytes, 1), out);
}

// The elements of a dense buffer whose bits are not all 0 -- unlike
// ZeroTest this keeps -0.0, which the CPU's schedules can write (a dense
// schedule over -0.0 inputs, Avg's division underflowing) -- so zeros plus
// these pairs give back the buffer bit for bit. At most `capacity` pairs:
// SIZE_MAX when there are more. One pass that skips 64 zero bytes at a
// time: a pass that counts and then one that writes cost 3x as much
// (13 ms against 3.5 ms for 64 MiB at 1 % density, this project's 2-core
// machine).
template <typename Bits, typename Index>
size_t setElements(const void* dense, size_t count, Index* indices, unsigned char* values,
                   size_t capacity) {
  constexpr size_t kLine = 64, kPerLine = kLine / sizeof(Bits);
  const auto* bytes = static_cast<const unsigned char*>(dense);
  size_t found = 0;
  auto take = [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      Bits v;
      std::memcpy(&v, bytes + i * sizeof(Bits), sizeof(Bits));
      if (v == 0) continue;
      if (found == capacity) return false;
      indices[found] = static_cast<Index>(i);
      std::memcpy(values + found * sizeof(Bits), &v, sizeof(Bits));
      ++found;
    }
    return true;
  };
  size_t i = 0;
  for (; i + kPerLine <= count; i += kPerLine) {
    uint64_t line[kLine / sizeof(uint64_t)];
    std::memcpy(line, bytes + i * sizeof(Bits), kLine);
    uint64_t any = 0;
    for (uint64_t word : line) any |= word;
    if (any != 0 && !take(i, i + kPerLine)) return SIZE_MAX;
  }
  return take(i, count) ? found : SIZE_MAX;
}

template <typename Index>
size_t setElements(size_t valueBytes, const void* dense, size_t count, Index* indices,
                   unsigned char* values, size_t capacity) {
  switch (valueBytes) {
    case 1:
      return setElements<uint8_t>(dense, count, indices, values, capacity);
    case 2:
      return setElements<uint16_t>(dense, count, indices, values, capacity);
    case 4:
      return setElements<uint32_t>(dense, count, indices, values, capacity);
    default:
      return setElements<uint64_t>(dense, count, indices, values, capacity);
  }
}

// At most `capacity` set elements as pairs, indices of `indexBytes` each;
// SIZE_MAX when there are more.
size_t setElements(size_t valueBytes, size_t indexBytes, const void* dense, size_t count,
                   void* indices, unsigned char* values, size_t capacity) {
  if (indexBytes == sizeof(uint32_t))
    return setElements(valueBytes, dense, count, static_cast<uint32_t*>(indices), values, capacity);
  return setElements(valueBytes, dense, count, static_cast<uint64_t*>(indices), values, capacity);
}

// The input's pairs, written on the device by stageInput, brought to the
// host only where a schedule reads them there (sparse/pair_source.h):
// into the plan's pinned buffer, the 32-bit indices widened for the CPU's
// COO form, which takes uint64 only (SparseCall::nonZeroIndices): nnz x 8
// bytes and one pass, into a vector the communicator keeps
// (SparseWorkspace::deviceInputIndices).
class DevicePairs final : public sparse::PairSource {
 public:
  DevicePairs(DeviceNonZeros& onDevice, spcclDataType_t type, DeviceSparsePlan* host,
              std::vector<uint64_t>& wideIndices)
      : onDevice_(onDevice), type_(type), host_(host), wideIndices_(wideIndices) {}

  // Copies once; a later fetch in the same call gets the same pointers.
  spcclResult_t fetch(const uint64_t** indices, const unsigned char** values) override {
    if (fetchedIndices_ != nullptr) {
      *indices = fetchedIndices_;
      *values = fetchedValues_;
      return spcclSuccess;
    }
    const uint64_t nnz = onDevice_.nonZeros();
    const size_t indexBytes = onDevice_.indexBytes(), valueBytes = spcclTypeSize(type_);
    void* pairIndices = host_->input.data();
    auto* pairValues =
        static_cast<unsigned char*>(pairIndices) + ds::valuesOffset(nnz, indexBytes, valueBytes);
    SPCCL_CHECK(onDevice_.copyPairsToHost(pairIndices, pairValues));
    *indices = static_cast<const uint64_t*>(pairIndices);
    if (indexBytes == sizeof(uint32_t)) {
      const auto* narrow = static_cast<const uint32_t*>(pairIndices);
      wideIndices_.assign(narrow, narrow + nnz);
      *indices = wideIndices_.data();
    }
    *values = pairValues;
    fetchedIndices_ = *indices;
    fetchedValues_ = pairValues;
    bytesToHost_ = nnz * (indexBytes + valueBytes);
    return spcclSuccess;
  }
  // What fetch copied (0 where no schedule asked): for the staging report.
  size_t bytesToHost() const { return bytesToHost_; }

 private:
  DeviceNonZeros& onDevice_;
  spcclDataType_t type_;
  DeviceSparsePlan* host_;
  std::vector<uint64_t>& wideIndices_;
  const uint64_t* fetchedIndices_ = nullptr;  // (where fetch put them)
  const unsigned char* fetchedValues_ = nullptr;
  size_t bytesToHost_ = 0;
};

// The input's non-zeros: as pairs, written on the device and left there
// for `pairs` (the COO form the CPU's call takes, sparse_allreduce.h:
// canonical as the kernels write it, ascending, unique, no zeros), or the
// whole input on the host where pairs would not shrink it or where it
// holds -0.0 (the CPU's dense schedules add a dense input as it is and
// keep -0.0's bits, which pairs lose). Either way the CPU's call computes
// what the staged call does.
spcclResult_t stageInput(DeviceNonZeros& onDevice, const SparseCall& call, size_t indexBytes,
                         DeviceSparsePlan* host, DevicePairs* pairs, SparseCall* run,
                         size_t* bytesIn) {
  SPCCL_CHECK(onDevice.count(call.denseInput, call.count));
  const size_t valueBytes = spcclTypeSize(call.type);
  const uint64_t nnz = onDevice.nonZeros();
  *bytesIn = 2 * sizeof(uint64_t);  // the totals
  if (onDevice.signedZeros() == 0 &&
      ds::pairsBytes(nnz, indexBytes, valueBytes) < call.count * valueBytes) {
    SPCCL_CHECK(onDevice.writePairs());
    run->denseInput = nullptr;
    run->pairSource = pairs;
    run->nnz = nnz;
    return spcclSuccess;
  }
  SPCCL_CHECK(onDevice.copyToHost(host->input.data(), call.denseInput, call.count * valueBytes,
                                  "the whole input to the host"));
  run->denseInput = host->input.data();
  *bytesIn += call.count * valueBytes;
  return spcclSuccess;
}

// A dense result into the user's device output: its set elements as
// pairs, scattered into zeros on the device, or the whole output where
// pairs would not shrink it.
spcclResult_t deliverDense(DeviceNonZeros& onDevice, const SparseCall& call, size_t indexBytes,
                           const void* dense, DeviceSparsePlan* host, size_t* bytesOut) {
  const size_t valueBytes = spcclTypeSize(call.type);
  const size_t denseBytes = call.count * valueBytes;
  // Pairs only while smaller than the dense bytes: they then fit in the
  // input's buffer (used up by now), the values aligned after them
  // (ds::valuesOffset pads only 8-byte values after an odd number of
  // 4-byte indices, by 4 bytes: the strict inequality between multiples of
  // 4 leaves them).
  const size_t capacity = (denseBytes - 1) / (indexBytes + valueBytes);
  void* indices = host->input.data();
  auto* values =
      static_cast<unsigned char*>(indices) + ds::valuesOffset(capacity, indexBytes, valueBytes);
  const size_t set =
      setElements(valueBytes, indexBytes, dense, call.count, indices, values, capacity);
  if (set == SIZE_MAX) {
    *bytesOut = denseBytes;
    return onDevice.copyToDevice(call.denseOutput, dense, denseBytes,
                                 "the whole result to the device");
  }
  *bytesOut = set * (indexBytes + valueBytes);
  return onDevice.scatter(call.denseOutput, call.count, indices, values, set);
}

// The result into the user's device output. As pairs (the CPU's call
// gives them so only where all ranks' pairs together are smaller than the
// dense bytes, so they fit in the input's buffer): copied there, the
// indices narrowed to indexBytes, and scattered into zeros on the device.
spcclResult_t deliverOutput(DeviceNonZeros& onDevice, const SparseCall& call, size_t indexBytes,
                            const sparse::SparseResult& result, DeviceSparsePlan* host,
                            size_t* bytesOut) {
  if (result.dense != nullptr)
    return deliverDense(onDevice, call, indexBytes, result.dense, host, bytesOut);
  const size_t valueBytes = spcclTypeSize(call.type);
  const size_t nnz = result.pairs.size();
  if (ds::pairsBytes(nnz, indexBytes, valueBytes) > call.count * valueBytes)
    return SPCCL_FAIL(spcclInternalError,
                      "%s: the CPU's call gave %zu result pairs, more than the dense %zu "
                      "elements' bytes",
                      call.name, nnz, call.count);
  void* indices = host->input.data();
  auto* values =
      static_cast<unsigned char*>(indices) + ds::valuesOffset(nnz, indexBytes, valueBytes);
  const uint64_t* positions = result.pairs.positions.data();
  if (indexBytes == sizeof(uint32_t))
    std::transform(positions, positions + nnz, static_cast<uint32_t*>(indices),
                   [](uint64_t position) { return static_cast<uint32_t>(position); });  // < count
  else if (nnz > 0)  // an empty result's vectors may hold no memory (null data())
    std::memcpy(indices, positions, nnz * sizeof(uint64_t));
  if (nnz > 0) std::memcpy(values, result.pairs.values.data(), nnz * valueBytes);
  *bytesOut = nnz * (indexBytes + valueBytes);
  return onDevice.scatter(call.denseOutput, call.count, indices, values, nnz);
}

}  // namespace

bool deviceSparseApplies(const StagedCall& staged, const SparseCall& call) {
  return knobInt("SPCCL_DEVICE_SPARSE") != 0 && !call.cooOutput && call.denseInput != nullptr &&
         call.denseOutput != nullptr && call.count > 0 && staged.hasDeviceMemory() &&
         sparse::deviceNonZerosAvailable(call.type);
}

spcclResult_t prepareDeviceSparse(const StagedCall& staged, const SparseCall& call,
                                  std::shared_ptr<DeviceSparsePlan>* out) {
  auto plan = std::make_shared<DeviceSparsePlan>();
  device::ScopedCudaContext current(staged.context());
  SPCCL_CHECK(device::ownStream(call.name, &plan->stream));
  SPCCL_CHECK(DeviceNonZeros(call.name, call.type, plan->stream).loadKernels());
  const size_t bytes = call.count * spcclTypeSize(call.type);
  SPCCL_CHECK(acquire(bytes, &plan->input));
  *out = std::move(plan);
  return spcclSuccess;
}

spcclResult_t runDeviceSparse(spcclComm_t comm, StagedCall& staged, const SparseCall& call,
                              const std::shared_ptr<DeviceSparsePlan>& plan) {
  return staged.runDirect([comm, call, plan]() -> spcclResult_t {
    SparseCall run = call;
    size_t bytesIn = 0, bytesOut = 0;
    const size_t indexBytes = pairIndexBytes(call.count);
    DeviceNonZeros onDevice(call.name, call.type, plan->stream, indexBytes);
    // The communicator's sparse workspace is this body's alone: it is one
    // unit of the communicator's queue (below).
    DevicePairs pairs(onDevice, call.type, plan.get(), comm->sparse->workspace.deviceInputIndices);
    const spcclResult_t mine =
        stageInput(onDevice, call, indexBytes, plan.get(), &pairs, &run, &bytesIn);
    sparse::SparseResult result;
    run.resultOut = &result;
    // resultOut replaces the dense output: the CPU's call must never hold
    // the user's device pointer as a host output (review).
    run.denseOutput = nullptr;
    // Balanced Parallelism buckets the pairs where they lie, on the device,
    // and the pairs themselves never cross.
    std::shared_ptr<sparse::DeviceRankTiles>& rankTiles = comm->sparse->workspace.deviceRankTiles;
    if (rankTiles == nullptr) rankTiles = std::make_shared<sparse::DeviceRankTiles>();
    sparse::DevicePairBucketer bucketer(onDevice, call.type, run.nnz, rankTiles.get());
    if (mine == spcclSuccess && run.pairSource != nullptr) run.bucketer = &bucketer;
    // A rank whose device part failed still takes part in the call's
    // agreement, its input marked invalid, so that its peers fail at once
    // (naming it) instead of at the deadline; it keeps its own error.
    const std::string why = mine != spcclSuccess ? threadLastError() : std::string();
    if (mine != spcclSuccess) run.inputValid = false;
    const spcclResult_t ran = spccl::runCollective(
        *comm->engine, sparse::signatureOf(run), [comm, &run](CollContext& ctx) {
          return sparse::runSparseAllReduce(ctx, *comm->sparse, run);
        });
    if (mine != spcclSuccess) return failWith(mine, __FILE__, __LINE__, "%s", why.c_str());
    SPCCL_CHECK(ran);
    if (bucketer.failure() != spcclSuccess)  // (the host bucketed instead, for the peers' sake)
      return failWith(bucketer.failure(), __FILE__, __LINE__, "%s", bucketer.why().c_str());
    // A dense result lies in the communicator's sparse workspace, which
    // only the thread running its calls touches: read here, after
    // runCollective, it is still this call's, because this whole body is
    // one unit of the communicator's queue (StagedCall::runDirect), so no
    // other sparse call runs before it ends.
    bytesIn += pairs.bytesToHost();
    SPCCL_CHECK(deliverOutput(onDevice, call, indexBytes, result, plan.get(), &bytesOut));
    comm->stagingProfile->recordDeviceCopies(DevicePart::kSparse, bytesIn, bytesOut);
    if (bucketer.bucketedOnDevice())
      comm->stagingProfile->recordDeviceCopies(DevicePart::kSparseBuckets, bucketer.bytesToHost(),
                                               0);
    return spcclSuccess;
  });
}

}  // namespace spccl
