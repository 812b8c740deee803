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
  unsigned type = 0;
  unsigned managed = 0;
  int ordinal = -1;
  CuContext context = nullptr;
  int attributes[] = {kAttributeMemoryType, kAttributeIsManaged, kAttributeDeviceOrdinal,
                      kAttributeContext};
  void* values[] = {&type, &managed, &ordinal, &context};
  // Memory the driver does not know answers type 0: plain host memory.
  if (d->pointerGetAttributes(4, attributes, values, reinterpret_cast<CuDevicePtr>(pointer)) != 0 ||
      type == 0)
    return location;
  if (managed != 0)
    location.kind = MemoryKind::Managed;
  else if (type == kMemoryTypeDevice)
    location.kind = MemoryKind::Device;
  else if (type == kMemoryTypeHost)
    location.kind = MemoryKind::PinnedHost;
  location.device = ordinal;
  location.context = context;
  return location;
}

bool isDeviceMemoryOf(const void* pointer, int device) {
  const BufferLocation location = locateBuffer(pointer);
  return location.kind == MemoryKind::Device && location.device == device;
}

}  // namespace spccl::device
