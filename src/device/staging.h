// The buffers of one call, and where the CPU reads and writes them: the
// user's own pointer for memory the CPU can touch, a pinned host copy for
// device memory. The copies in and out run synchronously or in a CUDA
// stream's order.
#pragma once

#include <cstddef>
#include <vector>

#include "device/cuda_driver.h"
#include "device/memory_kind.h"
#include "device/pinned_pool.h"
#include "spccl.h"

namespace spccl::device {

// Part of one argument's bytes: `bytes` at `offset` from the pointer the
// argument was registered with (add's `pointer`). A call cut into pieces
// (coll/dense_pieces.h) copies each piece's ranges on their own.
struct StagedRange {
  const void* base;
  size_t offset;
  size_t bytes;
};

enum class Access {
  Read = 1,       // the call reads it: copied in
  Write = 2,      // the call writes it: copied out
  ReadWrite = 3,  // both (in place)
};

class StagingSet {
 public:
  // Registers `bytes` at `pointer` under the argument's `name`. The same
  // pointer twice (in place) is one buffer read and written. Zero bytes
  // and NULL are nothing to stage.
  void add(const char* name, const void* pointer, size_t bytes, Access access);

  // "<call>: <second> is host memory but <first> is device memory (device
  // 0): both must be of one kind" when the two arguments differ in whether
  // the CPU can touch them, or are device memory of two devices.
  spcclResult_t requireSameKind(const char* call, const char* first, const char* second) const;

  bool hasDeviceMemory() const;
  // The device of the first device buffer; -1 without one.
  int device() const;

  // Takes the pinned buffers. Needs the driver and a current context.
  spcclResult_t allocate();

  // Where the CPU reaches the bytes at `pointer`, which is NULL, or lies
  // in a registered buffer, or is not registered (returned unchanged).
  void* hostView(const void* pointer) const;

  // The bytes copyIn and copyOut move.
  size_t bytesToCopy(Access direction) const;

  // Device -> staging for every buffer the call reads; stream NULL: now.
  spcclResult_t copyIn(CuStream stream) const;
  // Staging -> device for every buffer the call writes; stream NULL: now.
  spcclResult_t copyOut(CuStream stream) const;
  // The same for part of a buffer, always in the stream's order (the NULL
  // stream's too). A range of an argument without a staging copy (memory
  // the CPU reaches, or not registered) is nothing to copy.
  spcclResult_t copyRangeIn(CuStream stream, const StagedRange& range) const;
  spcclResult_t copyRangeOut(CuStream stream, const StagedRange& range) const;

 private:
  struct Buffer {
    const char* name;
    const void* pointer;
    size_t bytes;
    unsigned access;
    BufferLocation location;
    PinnedBuffer staging;  // device memory only
  };
  const Buffer* find(const char* name) const;
  // *piece: the staged buffer registered at exactly range.base (nullptr if
  // none, or the range is empty); spcclInternalError if the range lies
  // outside it.
  spcclResult_t stagedPiece(const StagedRange& range, const Buffer** piece) const;
  std::vector<Buffer> buffers_;
};

}  // namespace spccl::device
