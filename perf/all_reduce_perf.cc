// all_reduce_perf: spcclAllReduce, nccl-tests' all_reduce_perf.
#include "common/collective_spec.h"

namespace {

using namespace spccl::perf;

const CollectiveSpec kAllReduce{
    .name = "all_reduce",
    .reduces = true,
    .rooted = false,
    .busBandwidthFactor = bus_factor::allReduce,
    .layout =
        [](size_t count, int) {
          return BufferLayout{count, count, count, 0, 0};
        },
    .run =
        [](const CollectiveCall& c) {
          return spcclAllReduce(c.sendBuffer, c.recvBuffer, c.count, c.type, c.op, c.comm,
                                c.stream);
        },
    .expected = [](const CheckContext& c, size_t i) { return c.data.reducedOverRanks(i); },
    .definesResultOn = nullptr,
};

}  // namespace

int main(int argc, char** argv) { return perfMain(argc, argv, kAllReduce); }
