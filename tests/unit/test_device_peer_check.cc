// Whether a communicator's ranks may take the device-resident all-reduce
// on several GPUs (devicesReachEachOther, core/device_collective_call.h):
// from the rendezvous table alone, so a table is built here by hand,
// including entries a faulty or hostile peer could send.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/bootstrap.h"
#include "core/device_collective_call.h"

namespace spccl {
namespace {

constexpr device::DeviceLocation kGpu0 = 0x1000, kGpu1 = 0x1100, kGpu2 = 0x1200;

RankInfo rankOn(device::DeviceLocation self, const std::vector<device::DeviceLocation>& peers) {
  RankInfo info;
  info.devicePeers.self = self;
  for (device::DeviceLocation p : peers) info.devicePeers.peers[info.devicePeers.peerCount++] = p;
  return info;
}

TEST(DeviceAllReducePeers, OneDeviceNeedsNoPeerAccess) {
  std::string why;
  EXPECT_TRUE(
      devicesReachEachOther({rankOn(kGpu1, {}), rankOn(kGpu1, {}), rankOn(kGpu1, {})}, &why));
}

TEST(DeviceAllReducePeers, EveryPairBothWays) {
  std::string why;
  EXPECT_TRUE(devicesReachEachOther(
      {rankOn(kGpu0, {kGpu1, kGpu2}), rankOn(kGpu1, {kGpu0, kGpu2}), rankOn(kGpu2, {kGpu1, kGpu0})},
      &why))
      << why;
  // Rank 2's device cannot access rank 0's: named, whichever side lists it.
  EXPECT_FALSE(devicesReachEachOther(
      {rankOn(kGpu0, {kGpu1, kGpu2}), rankOn(kGpu1, {kGpu0, kGpu2}), rankOn(kGpu2, {kGpu1})},
      &why));
  EXPECT_EQ(why,
            "rank 2 (device 0000:12:00) cannot access rank 0's device 0000:10:00 as a peer "
            "(cuDeviceCanAccessPeer)");
}

// Two MIG instances of one GPU: one PCI location, two UUIDs.
TEST(DeviceAllReducePeers, OnePciLocationTwoUuidsIsTwoDevices) {
  RankInfo first = rankOn(kGpu1, {}), second = rankOn(kGpu1, {});
  second.devicePeers.selfUuid[15] = 1;
  std::string why;
  EXPECT_FALSE(devicesReachEachOther({first, second}, &why));
  EXPECT_EQ(why,
            "ranks 0 and 1 are on two devices at one PCI location 0000:11:00 (MIG instances of "
            "one GPU: no CUDA IPC between them)");
  second.devicePeers.selfUuid[15] = 0;
  EXPECT_TRUE(devicesReachEachOther({first, second}, &why));
}

// A count outside 0..kMaxPeerDevices lists nothing (never read past the
// array); an unknown device reaches nothing, not even another unknown one.
TEST(DeviceAllReducePeers, MalformedEntriesReachNothing) {
  std::string why;
  for (int32_t count : {-1, device::kMaxPeerDevices + 1, 1 << 30}) {
    RankInfo bad = rankOn(kGpu0, {kGpu1});
    bad.devicePeers.peerCount = count;
    EXPECT_FALSE(devicesReachEachOther({bad, rankOn(kGpu1, {kGpu0})}, &why)) << count;
  }
  EXPECT_FALSE(devicesReachEachOther({rankOn(0, {}), rankOn(0, {})}, &why));
  EXPECT_NE(why.find("an unknown device"), std::string::npos) << why;
}

}  // namespace
}  // namespace spccl
