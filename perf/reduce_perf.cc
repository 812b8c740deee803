// reduce_perf: spcclReduce to -r, nccl-tests' reduce_perf.
#include "common/collective_spec.h"

namespace {

using namespace spccl::perf;

const CollectiveSpec kReduce{
    .name = "reduce",
    .reduces = true,
    .rooted = true,
    .busBandwidthFactor = bus_factor::once,
    .layout =
        [](size_t count, int) {
          return BufferLayout{count, count, count, 0, 0};
        },
    .run =
        [](const CollectiveCall& c) {
          return spcclReduce(c.sendBuffer, c.recvBuffer, c.count, c.type, c.op, c.root, c.comm,
                             c.stream);
        },
    .expected = [](const CheckContext& c, size_t i) { return c.data.reducedOverRanks(i); },
    // Only the root's receive buffer is written.
    .definesResultOn = [](int rank, int root) { return rank == root; },
};

}  // namespace

int main(int argc, char** argv) { return perfMain(argc, argv, kReduce); }
