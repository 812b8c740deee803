#include "core/collective_buffers.h"

#include <algorithm>

namespace spccl {

void addCollectiveBuffers(StagedCall& staged, const CollArgs& a, int rank, int nranks) {
  const size_t n = static_cast<size_t>(nranks);
  const size_t bytes = a.count * spcclTypeSize(a.datatype);
  const void* send = a.sendbuff;
  switch (a.type) {
    case CollType::AllReduce:
      staged.add("sendbuff", send, bytes, device::Access::Read);
      staged.add("recvbuff", a.recvbuff, bytes, device::Access::Write);
      return;
    case CollType::Broadcast:
      if (rank == a.root) staged.add("sendbuff", send, bytes, device::Access::Read);
      staged.add("recvbuff", a.recvbuff, bytes, device::Access::Write);
      return;
    case CollType::Reduce:
      staged.add("sendbuff", send, bytes, device::Access::Read);
      if (rank == a.root) staged.add("recvbuff", a.recvbuff, bytes, device::Access::Write);
      return;
    case CollType::AllGather:
      staged.add("sendbuff", send, bytes, device::Access::Read);
      staged.add("recvbuff", a.recvbuff, bytes * n, device::Access::Write);
      return;
    case CollType::ReduceScatter:
      staged.add("sendbuff", send, bytes * n, device::Access::Read);
      staged.add("recvbuff", a.recvbuff, bytes, device::Access::Write);
      return;
    case CollType::AllToAll:
      staged.add("sendbuff", send, bytes * n, device::Access::Read);
      staged.add("recvbuff", a.recvbuff, bytes * n, device::Access::Write);
      return;
    case CollType::AllToAllv: {
      size_t sendEnd = 0, recvEnd = 0;
      for (size_t peer = 0; peer < n; ++peer) {
        sendEnd = std::max(sendEnd, a.sdispls[peer] + a.sendcounts[peer]);
        recvEnd = std::max(recvEnd, a.rdispls[peer] + a.recvcounts[peer]);
      }
      const size_t typeSize = spcclTypeSize(a.datatype);
      staged.add("sendbuff", send, sendEnd * typeSize, device::Access::Read);
      // Read too: the gaps between the peers' blocks keep what they held.
      staged.add("recvbuff", a.recvbuff, recvEnd * typeSize, device::Access::ReadWrite);
      return;
    }
    default:
      return;
  }
}

spcclResult_t addCollectiveBuffersOfOneKind(StagedCall& staged, const CollArgs& args, int rank,
                                            int nranks) {
  addCollectiveBuffers(staged, args, rank, nranks);
  return staged.requireSameKind("sendbuff", "recvbuff");
}

}  // namespace spccl
