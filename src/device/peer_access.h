// Which devices of this host a CUDA device can read and write directly
// (peer access: NVLink or PCIe P2P), for the device-resident all-reduce
// (coll/device_all_reduce.h): a rank's kernel reads every peer's buffer,
// which without peer access faults, and cuIpcOpenMemHandle may refuse the
// handle. Each rank sends what its device reaches in the rendezvous
// (core/bootstrap.h, RankInfo), so every rank decides alike.
//
// A device is named by its PCI location, not its ordinal: ordinals differ
// between processes that see different devices (CUDA_VISIBLE_DEVICES).
// Only devices this process sees can be asked about; a peer on a device it
// does not see counts as unreachable (the call falls back).
#pragma once

#include <cstdint>
#include <string>

#include "device/cuda_driver.h"

namespace spccl::device {

// PCI domain, bus and device packed as (domain << 16) | (bus << 8) | device;
// 0 (00:00.0, a host bridge, never a GPU) where unknown.
using DeviceLocation = uint64_t;

// A host with more devices than this is rare (16 GPUs is the largest
// NVIDIA board); the devices past it are not listed, so ranks on them
// fall back to the staged path.
constexpr int kMaxPeerDevices = 32;

// Part of RankInfo, so plain bytes of fixed size (a layout change changes
// sizeof(RankInfo), which the rendezvous checks: core/bootstrap.cc).
struct DevicePeerAccess {
  DeviceLocation self = 0;  // the rank's device at creation
  int32_t peerCount = 0;    // entries of `peers` in use; anything outside 0..kMaxPeerDevices is 0
  int32_t reserved = 0;
  // cuDeviceGetUuid_v2: tells apart the MIG instances of one GPU, which
  // share its PCI location and which CUDA IPC does not connect.
  unsigned char selfUuid[16] = {};
  DeviceLocation peers[kMaxPeerDevices] = {};  // other devices `self` can access as a peer
};

// The entry points for devices, kept apart from CudaDriver (cuda_driver.h)
// so that staging works with a driver that lacks them.
struct CudaDeviceDriver {
  CuResult (*deviceGetCount)(int* count);
  CuResult (*deviceGet)(int* device, int ordinal);
  CuResult (*deviceGetAttribute)(int* value, int attribute, int device);
  CuResult (*deviceCanAccessPeer)(int* canAccess, int device, int peer);
  CuResult (*deviceGetUuid)(unsigned char* uuid, int device);  // CUuuid: 16 bytes
};
const CudaDeviceDriver* cudaDeviceDriver();

// What the calling thread's current device reaches; false (and *out
// cleared) without a driver, a current context, or an answer.
bool describeCurrentDevice(DevicePeerAccess* out);

// The current context's device's location; 0 where unknown.
DeviceLocation currentDeviceLocation();

// Whether a rank on `from` can read and write memory on `to`'s device:
// the same device (location and UUID), or one `from` listed. Reads a
// peer's counts defensively.
bool reaches(const DevicePeerAccess& from, const DevicePeerAccess& to);

// "0000:65:00" for logs and errors.
std::string describeLocation(DeviceLocation location);

}  // namespace spccl::device
