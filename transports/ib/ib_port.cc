#include "transports/ib/ib_port.h"

#include <iterator>

namespace spccl::ib {

namespace {

// The bit a one-hot verbs code sets; -1 when the code is not one-hot.
int oneHotBit(unsigned code) {
  for (int bit = 0; bit < 32; ++bit)
    if (code == (1u << bit)) return bit;
  return -1;
}

}  // namespace

std::string portName(const IbPort& port) { return port.device + ":" + std::to_string(port.port); }

int linkSpeedMbps(uint8_t activeSpeed, uint8_t activeWidth) {
  // Per-lane data rates of active_speed's codes 1..128: SDR, DDR, QDR,
  // FDR10, FDR, EDR, HDR, NDR. RoCE ports report the nearest InfiniBand
  // equivalent (100GbE: 4x EDR).
  constexpr int kLaneMbps[] = {2500, 5000, 10000, 10000, 14000, 25000, 50000, 100000};
  // Lanes of active_width's codes 1, 2, 4, 8, 16: 1x, 4x, 8x, 12x, 2x.
  constexpr int kLanes[] = {1, 4, 8, 12, 2};
  int speed = oneHotBit(activeSpeed);
  int width = oneHotBit(activeWidth);
  if (speed < 0 || speed >= static_cast<int>(std::size(kLaneMbps)) || width < 0 ||
      width >= static_cast<int>(std::size(kLanes)))
    return 0;
  return kLaneMbps[speed] * kLanes[width];
}

}  // namespace spccl::ib
