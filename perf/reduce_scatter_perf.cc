// reduce_scatter_perf: spcclReduceScatter, nccl-tests' reduce_scatter_perf.
// The size is the send buffer; each rank receives its reduced size / nranks.
#include "common/collective_spec.h"

namespace {

using namespace spccl::perf;

const CollectiveSpec kReduceScatter{
    .name = "reduce_scatter",
    .reduces = true,
    .rooted = false,
    .busBandwidthFactor = bus_factor::allButOwnShare,
    .layout =
        [](size_t count, int nranks) {
          const size_t share = count / static_cast<size_t>(nranks);
          // In place, a rank's result lands on its own slot of the input.
          return BufferLayout{share * static_cast<size_t>(nranks), share, share, 0, share};
        },
    .run =
        [](const CollectiveCall& c) {
          return spcclReduceScatter(c.sendBuffer, c.recvBuffer, c.count, c.type, c.op, c.comm,
                                    c.stream);
        },
    .expected =
        [](const CheckContext& c, size_t i) {
          const size_t ownSlot = static_cast<size_t>(c.rank) * c.layout.paramCount;
          return c.data.reducedOverRanks(ownSlot + i);
        },
    .definesResultOn = nullptr,
};

}  // namespace

int main(int argc, char** argv) { return perfMain(argc, argv, kReduceScatter); }
