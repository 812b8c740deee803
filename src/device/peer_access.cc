#include "device/peer_access.h"

#include <atomic>
#include <cstdio>
#include <cstring>

namespace spccl::device {

namespace {

// CUdevice_attribute values of the driver ABI.
constexpr int kAttributePciBusId = 33;
constexpr int kAttributePciDeviceId = 34;
constexpr int kAttributePciDomainId = 50;

bool resolveDevice(void* library, CudaDeviceDriver* d) {
  return resolveDriverSymbol(library, &d->deviceGetCount, "cuDeviceGetCount") &&
         resolveDriverSymbol(library, &d->deviceGet, "cuDeviceGet") &&
         resolveDriverSymbol(library, &d->deviceGetAttribute, "cuDeviceGetAttribute") &&
         resolveDriverSymbol(library, &d->deviceCanAccessPeer, "cuDeviceCanAccessPeer") &&
         // _v2 gives a MIG instance its own UUID (CUDA 11.4 on).
         resolveDriverSymbol(library, &d->deviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid");
}

DeviceLocation locationOf(const CudaDeviceDriver& d, int device) {
  int domain = 0, bus = 0, slot = 0;
  if (d.deviceGetAttribute(&domain, kAttributePciDomainId, device) != 0 ||
      d.deviceGetAttribute(&bus, kAttributePciBusId, device) != 0 ||
      d.deviceGetAttribute(&slot, kAttributePciDeviceId, device) != 0 || domain < 0 || bus < 0 ||
      slot < 0)
    return 0;
  return (static_cast<uint64_t>(domain) << 16) | (static_cast<uint64_t>(bus & 0xff) << 8) |
         static_cast<uint64_t>(slot & 0xff);
}

// The CUdevice of the calling thread's current context; false without one.
bool currentDevice(const CudaDeviceDriver** table, int* device) {
  const CudaDriver* driver = cudaDriver();
  *table = cudaDeviceDriver();
  if (driver == nullptr || *table == nullptr) return false;
  CuContext context = nullptr;
  return driver->ctxGetCurrent(&context) == 0 && context != nullptr &&
         driver->ctxGetDevice(device) == 0;
}

}  // namespace

const CudaDeviceDriver* cudaDeviceDriver() {
  static std::atomic<const CudaDeviceDriver*> loaded{nullptr};
  if (cudaDriver() == nullptr) return nullptr;
  return lookUpDriverTable(loaded, resolveDevice);
}

DeviceLocation currentDeviceLocation() {
  const CudaDeviceDriver* d = nullptr;
  int device = -1;
  return currentDevice(&d, &device) ? locationOf(*d, device) : 0;
}

bool describeCurrentDevice(DevicePeerAccess* out) {
  *out = DevicePeerAccess{};
  const CudaDeviceDriver* d = nullptr;
  int mine = -1, count = 0;
  if (!currentDevice(&d, &mine) || d->deviceGetCount(&count) != 0) return false;
  out->self = locationOf(*d, mine);
  if (out->self == 0 || d->deviceGetUuid(out->selfUuid, mine) != 0) {
    *out = DevicePeerAccess{};
    return false;
  }
  for (int ordinal = 0; ordinal < count && out->peerCount < kMaxPeerDevices; ++ordinal) {
    int other = -1, can = 0;
    if (d->deviceGet(&other, ordinal) != 0 || other == mine) continue;
    const DeviceLocation location = locationOf(*d, other);
    // Not listed: an unknown location or no peer access (the ranks on it
    // fall back); a failed query is no error of creation.
    if (location == 0 || location == out->self || d->deviceCanAccessPeer(&can, mine, other) != 0 ||
        can == 0)
      continue;
    out->peers[out->peerCount++] = location;
  }
  return true;
}

bool reaches(const DevicePeerAccess& from, const DevicePeerAccess& to) {
  if (from.self == 0 || to.self == 0) return false;
  if (from.self == to.self)
    return std::memcmp(from.selfUuid, to.selfUuid, sizeof(from.selfUuid)) == 0;
  const int count = from.peerCount >= 0 && from.peerCount <= kMaxPeerDevices ? from.peerCount : 0;
  for (int i = 0; i < count; ++i)
    if (from.peers[i] == to.self) return true;
  return false;
}

std::string describeLocation(DeviceLocation location) {
  if (location == 0) return "an unknown device";
  char text[32];
  std::snprintf(text, sizeof(text), "%04llx:%02llx:%02llx",
                static_cast<unsigned long long>(location >> 16),
                static_cast<unsigned long long>((location >> 8) & 0xff),
                static_cast<unsigned long long>(location & 0xff));
  return text;
}

}  // namespace spccl::device
