// alltoall_perf: spcclAllToAll, nccl-tests' alltoall_perf. The size is a
// rank's send buffer: size / nranks to every rank, itself included. In
// place (sendbuff == recvbuff) as nccl-tests runs it.
#include "common/collective_spec.h"

namespace {

using namespace spccl::perf;

const CollectiveSpec kAllToAll{
    .name = "alltoall",
    .reduces = false,
    .rooted = false,
    .busBandwidthFactor = bus_factor::allButOwnShare,
    .layout =
        [](size_t count, int nranks) {
          const size_t block = count / static_cast<size_t>(nranks);
          const size_t total = block * static_cast<size_t>(nranks);
          return BufferLayout{total, total, block, 0, 0};
        },
    .run =
        [](const CollectiveCall& c) {
          return spcclAllToAll(c.sendBuffer, c.recvBuffer, c.count, c.type, c.comm, c.stream);
        },
    .expected =
        [](const CheckContext& c, size_t i) {
          // Block i / block came from that rank's block addressed to us.
          const size_t block = c.layout.paramCount;
          const size_t ownSlot = static_cast<size_t>(c.rank) * block;
          return c.data.input(static_cast<int>(i / block), ownSlot + i % block);
        },
    .definesResultOn = nullptr,
};

}  // namespace

int main(int argc, char** argv) { return perfMain(argc, argv, kAllToAll); }
