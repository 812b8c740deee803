// all_gather_perf: spcclAllGather, nccl-tests' all_gather_perf. The size is
// the gathered buffer; each rank contributes size / nranks.
#include "common/collective_spec.h"

namespace {

using namespace spccl::perf;

const CollectiveSpec kAllGather{
    .name = "all_gather",
    .reduces = false,
    .rooted = false,
    .busBandwidthFactor = bus_factor::allButOwnShare,
    .layout =
        [](size_t count, int nranks) {
          const size_t share = count / static_cast<size_t>(nranks);
          // In place, a rank's share already sits at its slot of the result.
          return BufferLayout{share, share * static_cast<size_t>(nranks), share, share, 0};
        },
    .run =
        [](const CollectiveCall& c) {
          return spcclAllGather(c.sendBuffer, c.recvBuffer, c.count, c.type, c.comm, c.stream);
        },
    .expected =
        [](const CheckContext& c, size_t i) {
          const size_t share = c.layout.paramCount;
          return c.data.input(static_cast<int>(i / share), i % share);
        },
    .definesResultOn = nullptr,
};

}  // namespace

int main(int argc, char** argv) { return perfMain(argc, argv, kAllGather); }
