// hierarchicalHashBucketing (hierarchical_hash_cuda.h): Zen's Algorithm 1
// with one thread per input entry, then the CPU's extraction order by
// stream compaction.
//
// Memory layout: partition p owns one region of r1_p + r2_p slots, its
// parallel memory followed by its serial memory; every slot has an
// occupancy mark (set by the atomic exchange that claims a parallel slot,
// or by the write of a serial slot). Compacting the regions' occupied slots
// in slot order (CUB DeviceSelect::Flagged) therefore gives, per
// partition, the parallel memory in slot order and then the serial memory
// in counter order: the CPU's extraction (Algorithm 1, lines 18-22); a
// segmented sum of the marks gives the bucket sizes.
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <vector>

#include "kernels/cuda/cub_scratch.cuh"
#include "kernels/cuda/hash_insert.h"
#include "kernels/cuda/hierarchical_hash_cuda.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/stream_buffer.cuh"

namespace spccl::kernels::cuda {
namespace {

// One thread per entry; the counts go to stats[0] (rehashed) and stats[1]
// (serial writes) once per thread.
__global__ void insertKernel(HashTables tables, HashMemory memory, unsigned long long* stats,
                             const uint64_t* indices, const int* owners, size_t nnz, int parts,
                             uint64_t partitionSeed, uint64_t secondLevelSeed) {
  InsertCounts counts;
  for (size_t ordinal = firstItem(); ordinal < nnz; ordinal += itemStride()) {
    const uint64_t idx = indices[ordinal];
    const int p = owners ? owners[ordinal] : zenOwner(idx, partitionSeed, parts);
    insertEntry(tables, memory, idx, p, ordinal, secondLevelSeed, &counts);
  }
  if (counts.rehashed != 0) atomicAdd(&stats[0], counts.rehashed);
  if (counts.serialWrites != 0) atomicAdd(&stats[1], counts.serialWrites);
}

bool validLayout(const HierarchicalHashLayout& layout) {
  const size_t parts = static_cast<size_t>(layout.parts);
  if (layout.parts < 1 || layout.parallelSlots.size() != parts ||
      layout.serialSlots.size() != parts)
    return false;
  for (size_t p = 0; p < parts; ++p)
    if (layout.parallelSlots[p] == 0 || layout.serialSlots[p] == 0) return false;
  return true;
}

// One round from empty memories with serial memories of serialSlots.
// serialCounts gets each partition's serial counter; when one ran past its
// memory the round stops there (the caller grows and reruns), otherwise
// the buckets are in ordinals and result.
cudaError_t runRound(const HierarchicalHashLayout& layout, const std::vector<uint64_t>& serialSlots,
                     const uint64_t* indices, const int* owners, size_t nnz, uint64_t* ordinals,
                     HierarchicalHashResult* result, std::vector<unsigned long long>* serialCounts,
                     cudaStream_t stream) {
  const size_t parts = static_cast<size_t>(layout.parts);
  const std::vector<uint64_t> tables = hashTablesFor(layout, serialSlots);
  const uint64_t totalSlots = tables[parts];

  StreamBuffer deviceTables(tables.size() * sizeof(uint64_t), stream);
  StreamBuffer slots(totalSlots * sizeof(uint64_t), stream);
  StreamBuffer occupied(totalSlots * sizeof(unsigned), stream);
  StreamBuffer counters((parts + 2) * sizeof(unsigned long long), stream);
  for (const StreamBuffer* buffer : {&deviceTables, &slots, &occupied, &counters})
    if (buffer->status() != cudaSuccess) return buffer->status();
  cudaError_t status =
      cudaMemcpyAsync(deviceTables.get<void>(), tables.data(), tables.size() * sizeof(uint64_t),
                      cudaMemcpyHostToDevice, stream);
  if (status == cudaSuccess)
    status = cudaMemsetAsync(occupied.get<void>(), 0, totalSlots * sizeof(unsigned), stream);
  if (status == cudaSuccess)
    status =
        cudaMemsetAsync(counters.get<void>(), 0, (parts + 2) * sizeof(unsigned long long), stream);
  if (status != cudaSuccess) return status;

  const auto* table = deviceTables.get<uint64_t>();
  auto* counts = counters.get<unsigned long long>();
  const HashMemory memory{slots.get<uint64_t>(), occupied.get<unsigned>(), counts};
  insertKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(
      hashTablesView(table, parts), memory, counts + parts, indices, owners, nnz, layout.parts,
      layout.partitionSeed, layout.secondLevelSeed);
  if ((status = launchError()) != cudaSuccess) return status;

  std::vector<unsigned long long> hostCounts(parts + 2);
  status = cudaMemcpyAsync(hostCounts.data(), counts, hostCounts.size() * sizeof(hostCounts[0]),
                           cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) return status;
  serialCounts->assign(hostCounts.begin(), hostCounts.begin() + parts);
  for (size_t p = 0; p < parts; ++p)
    if (hostCounts[p] > serialSlots[p]) return cudaSuccess;
  result->rehashed = hostCounts[parts];
  result->serialWrites = hostCounts[parts + 1];

  // Extraction: occupied slots in slot order, and how many per region.
  StreamBuffer selected(sizeof(size_t), stream);
  StreamBuffer bucketSizes(parts * sizeof(unsigned), stream);
  if (selected.status() != cudaSuccess) return selected.status();
  if (bucketSizes.status() != cudaSuccess) return bucketSizes.status();
  status = runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::Flagged(scratch, bytes, slots.get<uint64_t>(),
                                      occupied.get<unsigned>(), ordinals, selected.get<size_t>(),
                                      static_cast<int64_t>(totalSlots), stream);
  });
  if (status != cudaSuccess) return status;
  status = runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceSegmentedReduce::Sum(scratch, bytes, occupied.get<unsigned>(),
                                           bucketSizes.get<unsigned>(), layout.parts, table,
                                           table + 1, stream);
  });
  if (status != cudaSuccess) return status;
  size_t found = 0;
  std::vector<unsigned> sizes(parts);
  status =
      cudaMemcpyAsync(&found, selected.get<size_t>(), sizeof found, cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(sizes.data(), bucketSizes.get<unsigned>(), parts * sizeof(unsigned),
                             cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) return status;
  if (found != nnz) return cudaErrorUnknown;  // an entry lost or doubled: must never happen
  result->offsets.assign(parts + 1, 0);
  for (size_t p = 0; p < parts; ++p) result->offsets[p + 1] = result->offsets[p] + sizes[p];
  return cudaSuccess;
}

}  // namespace

cudaError_t hierarchicalHashBucketing(const HierarchicalHashLayout& layout, const uint64_t* indices,
                                      const int* owners, size_t nnz, uint64_t* ordinals,
                                      HierarchicalHashResult* result, cudaStream_t stream) {
  if (!validLayout(layout) || nnz >= (uint64_t{1} << 32)) return cudaErrorInvalidValue;
  *result = HierarchicalHashResult{};
  result->offsets.assign(static_cast<size_t>(layout.parts) + 1, 0);
  if (nnz == 0) return cudaSuccess;
  std::vector<uint64_t> serialSlots = layout.serialSlots;
  uint64_t growths = 0;
  std::vector<unsigned long long> serialCounts;
  for (int round = 1;; ++round) {
    const cudaError_t status = runRound(layout, serialSlots, indices, owners, nnz, ordinals, result,
                                        &serialCounts, stream);
    if (status != cudaSuccess) return status;
    if (!growSerialMemories(serialCounts, &serialSlots, &growths)) {
      result->serialGrowths = growths;
      result->rounds = round;
      return cudaSuccess;
    }
    // Rerun from empty memories. It can overflow again (other races, other
    // losers), but a count never exceeds nnz and each overflow at least
    // doubles its memory: the rounds end.
  }
}

}  // namespace spccl::kernels::cuda
