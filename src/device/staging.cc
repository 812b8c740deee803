#include "device/staging.h"

#include <cstring>

#include "base/check.h"

namespace spccl::device {

void StagingSet::add(const char* name, const void* pointer, size_t bytes, Access access) {
  if (pointer == nullptr || bytes == 0) return;
  for (Buffer& buffer : buffers_)
    if (buffer.pointer == pointer) {
      buffer.access |= static_cast<unsigned>(access);
      if (bytes > buffer.bytes) buffer.bytes = bytes;
      return;
    }
  buffers_.push_back(
      Buffer{name, pointer, bytes, static_cast<unsigned>(access), locateBuffer(pointer), {}});
}

const StagingSet::Buffer* StagingSet::find(const char* name) const {
  for (const Buffer& buffer : buffers_)
    if (std::strcmp(buffer.name, name) == 0) return &buffer;
  return nullptr;
}

spcclResult_t StagingSet::requireSameKind(const char* call, const char* first,
                                          const char* second) const {
  const Buffer* a = find(first);
  const Buffer* b = find(second);
  if (a == nullptr || b == nullptr) return spcclSuccess;
  const bool aDevice = a->location.kind == MemoryKind::Device;
  const bool bDevice = b->location.kind == MemoryKind::Device;
  if (aDevice != bDevice)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: %s is %s but %s is %s (device %d): both must be device memory or "
                      "both memory the CPU can reach",
                      call, second, memoryKindName(b->location.kind), first,
                      memoryKindName(a->location.kind),
                      aDevice ? a->location.device : b->location.device);
  if (aDevice && a->location.device != b->location.device)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: %s is memory of device %d but %s of device %d: one call, one device",
                      call, second, b->location.device, first, a->location.device);
  return spcclSuccess;
}

bool StagingSet::hasDeviceMemory() const {
  for (const Buffer& buffer : buffers_)
    if (buffer.location.kind == MemoryKind::Device) return true;
  return false;
}

int StagingSet::device() const {
  for (const Buffer& buffer : buffers_)
    if (buffer.location.kind == MemoryKind::Device) return buffer.location.device;
  return -1;
}

spcclResult_t StagingSet::allocate() {
  for (Buffer& buffer : buffers_)
    if (buffer.location.kind == MemoryKind::Device && buffer.staging.data() == nullptr)
      SPCCL_CHECK(acquirePinned(buffer.bytes, &buffer.staging));
  return spcclSuccess;
}

void* StagingSet::hostView(const void* pointer) const {
  // A buffer that starts at `pointer` first: an in-place all-gather's
  // sendbuff lies inside its recvbuff, and is staged (and copied in) apart.
  for (const Buffer& buffer : buffers_)
    if (buffer.pointer == pointer && buffer.staging.data() != nullptr) return buffer.staging.data();
  const auto* p = static_cast<const char*>(pointer);
  for (const Buffer& buffer : buffers_) {
    const auto* base = static_cast<const char*>(buffer.pointer);
    if (buffer.staging.data() != nullptr && p >= base && p < base + buffer.bytes)
      return static_cast<char*>(buffer.staging.data()) + (p - base);
  }
  return const_cast<void*>(pointer);
}

spcclResult_t StagingSet::stagedPiece(const StagedRange& range, const Buffer** piece) const {
  *piece = nullptr;
  if (range.bytes == 0) return spcclSuccess;
  for (const Buffer& buffer : buffers_) {
    if (buffer.pointer != range.base || buffer.staging.data() == nullptr) continue;
    if (range.offset > buffer.bytes || range.bytes > buffer.bytes - range.offset)
      return SPCCL_FAIL(spcclInternalError, "%s: piece [%zu, +%zu) lies outside its %zu bytes",
                        buffer.name, range.offset, range.bytes, buffer.bytes);
    *piece = &buffer;
    return spcclSuccess;
  }
  return spcclSuccess;
}

spcclResult_t StagingSet::copyRangeIn(CuStream stream, const StagedRange& range) const {
  const Buffer* buffer = nullptr;
  SPCCL_CHECK(stagedPiece(range, &buffer));
  if (buffer == nullptr) return spcclSuccess;
  const auto source = reinterpret_cast<CuDevicePtr>(buffer->pointer) + range.offset;
  void* target = static_cast<char*>(buffer->staging.data()) + range.offset;
  const CuResult result = cudaDriver()->memcpyDtoHAsync(target, source, range.bytes, stream);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "copying %s (%zu bytes at %zu) from the device: %s",
                      buffer->name, range.bytes, range.offset,
                      describeCuError("cuMemcpyDtoHAsync", result).c_str());
  return spcclSuccess;
}

spcclResult_t StagingSet::copyRangeOut(CuStream stream, const StagedRange& range) const {
  const Buffer* buffer = nullptr;
  SPCCL_CHECK(stagedPiece(range, &buffer));
  if (buffer == nullptr) return spcclSuccess;
  const auto target = reinterpret_cast<CuDevicePtr>(buffer->pointer) + range.offset;
  const void* source = static_cast<const char*>(buffer->staging.data()) + range.offset;
  const CuResult result = cudaDriver()->memcpyHtoDAsync(target, source, range.bytes, stream);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "copying %s (%zu bytes at %zu) to the device: %s",
                      buffer->name, range.bytes, range.offset,
                      describeCuError("cuMemcpyHtoDAsync", result).c_str());
  return spcclSuccess;
}

size_t StagingSet::bytesToCopy(Access direction) const {
  size_t bytes = 0;
  for (const Buffer& buffer : buffers_)
    if (buffer.staging.data() != nullptr && (buffer.access & static_cast<unsigned>(direction)))
      bytes += buffer.bytes;
  return bytes;
}

spcclResult_t StagingSet::copyIn(CuStream stream) const {
  const CudaDriver* d = cudaDriver();
  for (const Buffer& buffer : buffers_) {
    if (buffer.staging.data() == nullptr || !(buffer.access & static_cast<unsigned>(Access::Read)))
      continue;
    const auto source = reinterpret_cast<CuDevicePtr>(buffer.pointer);
    const CuResult result =
        stream == nullptr ? d->memcpyDtoH(buffer.staging.data(), source, buffer.bytes)
                          : d->memcpyDtoHAsync(buffer.staging.data(), source, buffer.bytes, stream);
    if (result != 0)
      return SPCCL_FAIL(spcclSystemError, "copying %s (%zu bytes) from the device: %s", buffer.name,
                        buffer.bytes, describeCuError("cuMemcpyDtoH", result).c_str());
  }
  return spcclSuccess;
}

spcclResult_t StagingSet::copyOut(CuStream stream) const {
  const CudaDriver* d = cudaDriver();
  for (const Buffer& buffer : buffers_) {
    if (buffer.staging.data() == nullptr || !(buffer.access & static_cast<unsigned>(Access::Write)))
      continue;
    const auto target = reinterpret_cast<CuDevicePtr>(buffer.pointer);
    const CuResult result =
        stream == nullptr ? d->memcpyHtoD(target, buffer.staging.data(), buffer.bytes)
                          : d->memcpyHtoDAsync(target, buffer.staging.data(), buffer.bytes, stream);
    if (result != 0)
      return SPCCL_FAIL(spcclSystemError, "copying %s (%zu bytes) to the device: %s", buffer.name,
                        buffer.bytes, describeCuError("cuMemcpyHtoD", result).c_str());
  }
  return spcclSuccess;
}

}  // namespace spccl::device
