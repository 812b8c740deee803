#include "device/memory_kind.h"

namespace spccl::device {

namespace {

// CUpointer_attribute and CUmemorytype values of the driver ABI.
constexpr int kAttributeContext = 1;
constexpr int kAttributeMemoryType = 2;
constexpr int kAttributeIsManaged = 8;
constexpr int kAttributeDeviceOrdinal = 9;
constexpr unsigned kMemoryTypeHost = 1;
constexpr unsigned kMemoryTypeDevice = 2;

}  // namespace

const char* memoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Host:
      return "host memory";
    case MemoryKind::PinnedHost:
      return "pinned host memory";
    case MemoryKind::Managed:
      return "managed memory";
    case MemoryKind::Device:
      return "device memory";
  }
  return "memory of an unknown kind";
}

BufferLocation locateBuffer(const void* pointer) {
  BufferLocation location;
  const CudaDriver* d = cudaDriver();
  if (d == nullptr || pointer == nullptr) return location;
  const auto address = reinterpret_cast<CuDevicePtr>(pointer);
  unsigned type = 0;
  // Memory the driver does not know fails the query: plain host memory.
  if (d->pointerGetAttribute(&type, kAttributeMemoryType, address) != 0) return location;
  unsigned managed = 0;
  if (d->pointerGetAttribute(&managed, kAttributeIsManaged, address) == 0 && managed != 0)
    location.kind = MemoryKind::Managed;
  else if (type == kMemoryTypeDevice)
    location.kind = MemoryKind::Device;
  else if (type == kMemoryTypeHost)
    location.kind = MemoryKind::PinnedHost;
  int ordinal = -1;
  if (d->pointerGetAttribute(&ordinal, kAttributeDeviceOrdinal, address) == 0)
    location.device = ordinal;
  CuContext context = nullptr;
  if (d->pointerGetAttribute(&context, kAttributeContext, address) == 0) location.context = context;
  return location;
}

}  // namespace spccl::device
