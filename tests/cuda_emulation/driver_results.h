// CUresult values of the driver ABI that the emulated driver returns
// (emulated_driver.cc, emulated_devices.cc): one list, so both answer a
// given failure with the same code NVIDIA's driver would.
#pragma once

namespace spccl::emulation {

using CuResult = int;
constexpr CuResult kSuccess = 0;
constexpr CuResult kInvalidValue = 1;
constexpr CuResult kInvalidDevice = 101;
constexpr CuResult kInvalidContext = 201;
constexpr CuResult kPeerAccessUnsupported = 217;
constexpr CuResult kInvalidHandle = 400;
constexpr CuResult kIllegalAddress = 700;

}  // namespace spccl::emulation
