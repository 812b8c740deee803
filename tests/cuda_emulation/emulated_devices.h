// The emulated driver's devices (emulated_driver.cc): how many there are
// and which can access which as a peer, from the environment of the test
// process, so that forked ranks share one host's layout:
//   EMU_CUDA_DEVICES=3             devices 0..2 (default 1, at most 8)
//   EMU_CUDA_NO_PEER_ACCESS=1:2,2:1  device 1 cannot access device 2's
//                                    memory, nor 2 device 1's (default:
//                                    every pair can; a device always
//                                    reaches itself)
//   EMU_CUDA_ONE_PCI_LOCATION=1    every device at one PCI location, as
//                                  the MIG instances of one GPU (each
//                                  keeps its own UUID)
// Read at each query: a test sets them before its ranks start. Not spccl
// knobs, hence no SPCCL_ prefix. Device d sits at PCI 0000:(0x10 + d):00
// and has the UUID "emulated-gpu-" followed by d and zeros.
#pragma once

namespace spccl::emulation {

constexpr int kMaxEmulatedDevices = 8;

int emulatedDeviceCount();
bool emulatedPeerAccess(int device, int peer);

}  // namespace spccl::emulation
