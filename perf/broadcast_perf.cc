// broadcast_perf: spcclBroadcast from -r, nccl-tests' broadcast_perf.
#include "common/collective_spec.h"

namespace {

using namespace spccl::perf;

const CollectiveSpec kBroadcast{
    .name = "broadcast",
    .reduces = false,
    .rooted = true,
    .busBandwidthFactor = bus_factor::once,
    .layout =
        [](size_t count, int) {
          return BufferLayout{count, count, count, 0, 0};
        },
    .run =
        [](const CollectiveCall& c) {
          return spcclBroadcast(c.sendBuffer, c.recvBuffer, c.count, c.type, c.root, c.comm,
                                c.stream);
        },
    .expected = [](const CheckContext& c, size_t i) { return c.data.input(c.root, i); },
    .definesResultOn = nullptr,
};

}  // namespace

int main(int argc, char** argv) { return perfMain(argc, argv, kBroadcast); }
