#include "emulated_devices.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "driver_results.h"

namespace spccl::emulation {

namespace {

// CUdevice_attribute values of the driver ABI.
constexpr int kAttributePciBusId = 33;
constexpr int kAttributePciDeviceId = 34;
constexpr int kAttributePciDomainId = 50;

bool validDevice(int device) { return device >= 0 && device < emulatedDeviceCount(); }

}  // namespace

int emulatedDeviceCount() {
  const char* text = std::getenv("EMU_CUDA_DEVICES");
  const int count = text != nullptr ? std::atoi(text) : 1;
  return count < 1 ? 1 : (count > kMaxEmulatedDevices ? kMaxEmulatedDevices : count);
}

bool emulatedPeerAccess(int device, int peer) {
  if (device == peer) return true;
  const char* text = std::getenv("EMU_CUDA_NO_PEER_ACCESS");
  if (text == nullptr) return true;
  const std::string pair = std::to_string(device) + ":" + std::to_string(peer);
  const std::string list = std::string(",") + text + ",";
  return list.find("," + pair + ",") == std::string::npos;
}

}  // namespace spccl::emulation

using namespace spccl::emulation;  // NOLINT(google-build-using-namespace): this file's own

// Device management, as the perf binaries' --device and spccl's peer
// check (src/device/peer_access.h) use it. A CUdevice is its ordinal.
extern "C" {

CuResult cuDeviceGetCount(int* count) {
  *count = emulatedDeviceCount();
  return kSuccess;
}

CuResult cuDeviceGet(int* device, int ordinal) {
  if (!validDevice(ordinal)) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

CuResult cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (!validDevice(device)) return kInvalidDevice;
  switch (attribute) {
    case kAttributePciDomainId:
    case kAttributePciDeviceId:
      *value = 0;
      return kSuccess;
    case kAttributePciBusId: {
      const char* one = std::getenv("EMU_CUDA_ONE_PCI_LOCATION");
      *value = 0x10 + (one != nullptr && std::strcmp(one, "1") == 0 ? 0 : device);
      return kSuccess;
    }
    default:
      return kInvalidValue;
  }
}

// CUuuid: 16 bytes. _v2 is the MIG-aware name; the emulation has no MIG
// of its own, so both give each device its UUID.
CuResult cuDeviceGetUuid_v2(unsigned char* uuid, int device) {
  if (!validDevice(device)) return kInvalidDevice;
  std::memset(uuid, 0, 16);
  std::memcpy(uuid, "emulated-gpu-", 13);
  uuid[13] = static_cast<unsigned char>('0' + device);
  return kSuccess;
}

CuResult cuDeviceGetUuid(unsigned char* uuid, int device) {
  return cuDeviceGetUuid_v2(uuid, device);
}

CuResult cuDeviceCanAccessPeer(int* canAccess, int device, int peer) {
  if (!validDevice(device) || !validDevice(peer)) return kInvalidDevice;
  *canAccess = device != peer && emulatedPeerAccess(device, peer) ? 1 : 0;
  return kSuccess;
}

}  // extern "C"
