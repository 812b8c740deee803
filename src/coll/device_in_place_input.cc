#include "coll/device_in_place_input.h"

#include <cstdint>

#include "base/check.h"
#include "coll/device_reduce_launch.h"
#include "coll/partition.h"

namespace spccl {

std::optional<InPlaceBlock> inPlaceOwnBlock(const DeviceCall& call, int nranks, int rank) {
  // Addresses, not pointers: a null sendbuff plus an offset is no pointer.
  const auto send = reinterpret_cast<uintptr_t>(call.sendbuff);
  const auto recv = reinterpret_cast<uintptr_t>(call.recvbuff);
  const size_t size = spcclTypeSize(call.datatype);
  const size_t countBytes = call.count * size;
  switch (call.type) {
    case CollType::AllReduce: {
      if (recv != send) return std::nullopt;
      const ElementRange block = evenBlock(call.count, nranks, rank);
      return InPlaceBlock{block.offset * size, block.count * size};
    }
    case CollType::ReduceScatter: {
      const size_t offset = static_cast<size_t>(rank) * countBytes;
      if (recv != send + offset) return std::nullopt;
      return InPlaceBlock{offset, countBytes};
    }
    case CollType::Reduce:
      if (rank != call.root || recv != send) return std::nullopt;
      return InPlaceBlock{0, countBytes};
    default:
      return std::nullopt;
  }
}

namespace {

// This rank's own block where a launch after the first reads it (the
// inputs are in rank order: its own is input `rank`), else nullopt.
std::optional<InPlaceBlock> blockToCopy(const DeviceCall& call, int nranks, int rank) {
  if (readInFirstLaunch(static_cast<size_t>(rank))) return std::nullopt;
  const std::optional<InPlaceBlock> block = inPlaceOwnBlock(call, nranks, rank);
  if (!block || block->bytes == 0) return std::nullopt;
  return block;
}

}  // namespace

size_t inPlaceInputScratchBytes(const DeviceCall& call, int nranks, int rank) {
  const std::optional<InPlaceBlock> block = blockToCopy(call, nranks, rank);
  return block ? block->bytes : 0;
}

spcclResult_t reduceFromOwnInputCopy(const DeviceCall& call, int nranks, int rank,
                                     const DeviceBuffers& buffers, device::CuStream stream,
                                     device::CuDevicePtr* input) {
  const std::optional<InPlaceBlock> block = blockToCopy(call, nranks, rank);
  if (!block) return spcclSuccess;
  // The block copied and its size are inPlaceOwnBlock's; the caller's
  // input, which the launch would otherwise read, must be that block.
  const auto own = reinterpret_cast<device::CuDevicePtr>(call.sendbuff) + block->offset;
  if (*input != own)
    return SPCCL_FAIL(spcclInternalError,
                      "%s: reduceFromOwnInputCopy: rank %d's input 0x%llx is not its own block "
                      "at sendbuff + %zu (0x%llx)",
                      call.name, rank, static_cast<unsigned long long>(*input), block->offset,
                      static_cast<unsigned long long>(own));
  device::CuDevicePtr copy = 0;
  SPCCL_CHECK(buffers.scratch(block->bytes, call.name, &copy));
  SPCCL_CHECK(copyOnStream(copy, own, block->bytes, stream, call.name,
                           "copying this rank's own input block to scratch (in place)"));
  *input = copy;
  return spcclSuccess;
}

}  // namespace spccl
