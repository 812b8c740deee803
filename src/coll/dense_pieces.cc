#include "coll/dense_pieces.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "coll/schedule_support.h"

namespace spccl {

namespace {

bool cutsIntoPieces(CollType type) {
  return type == CollType::AllReduce || type == CollType::Broadcast || type == CollType::Reduce ||
         type == CollType::AllGather || type == CollType::ReduceScatter;
}

// Elements per piece: whole elements, at least one.
size_t pieceElements(const CollArgs& args, size_t pieceBytes) {
  return std::max<size_t>(1, pieceBytes / spcclTypeSize(args.datatype));
}

// The elements [first, first + count) of the block that piece covers.
struct Span {
  size_t firstByte;
  size_t bytes;
};
Span spanOf(const CollArgs& args, size_t pieceBytes, size_t piece) {
  const size_t per = pieceElements(args, pieceBytes);
  const size_t first = piece * per;
  const size_t count = std::min(per, args.count - first);
  const size_t typeSize = spcclTypeSize(args.datatype);
  return Span{first * typeSize, count * typeSize};
}

const char* shifted(const void* pointer, size_t bytes) {
  return pointer == nullptr ? nullptr : static_cast<const char*>(pointer) + bytes;
}

}  // namespace

size_t densePieceCount(const CollArgs& args, size_t pieceBytes) {
  if (pieceBytes == 0 || !cutsIntoPieces(args.type) || args.count == 0) return 1;
  const size_t per = pieceElements(args, pieceBytes);
  return (args.count + per - 1) / per;
}

PieceRanges densePieceRanges(const CollArgs& args, int rank, int nranks, size_t pieceBytes,
                             size_t piece) {
  const Span span = spanOf(args, pieceBytes, piece);
  const size_t blockBytes = args.count * spcclTypeSize(args.datatype);
  PieceRanges ranges;
  const auto block = [&](std::vector<device::StagedRange>& into, const void* base) {
    for (int r = 0; r < nranks; ++r)
      into.push_back({base, static_cast<size_t>(r) * blockBytes + span.firstByte, span.bytes});
  };
  const bool root = rank == args.root;
  switch (args.type) {
    case CollType::AllReduce:
      ranges.reads.push_back({args.sendbuff, span.firstByte, span.bytes});
      ranges.writes.push_back({args.recvbuff, span.firstByte, span.bytes});
      break;
    case CollType::Broadcast:
      if (root) ranges.reads.push_back({args.sendbuff, span.firstByte, span.bytes});
      ranges.writes.push_back({args.recvbuff, span.firstByte, span.bytes});
      break;
    case CollType::Reduce:
      ranges.reads.push_back({args.sendbuff, span.firstByte, span.bytes});
      if (root) ranges.writes.push_back({args.recvbuff, span.firstByte, span.bytes});
      break;
    case CollType::AllGather:
      ranges.reads.push_back({args.sendbuff, span.firstByte, span.bytes});
      block(ranges.writes, args.recvbuff);
      break;
    case CollType::ReduceScatter:
      block(ranges.reads, args.sendbuff);
      ranges.writes.push_back({args.recvbuff, span.firstByte, span.bytes});
      break;
    default:
      break;
  }
  return ranges;
}

spcclResult_t runDensePiece(CollContext& ctx, const CollArgs& args, size_t pieceBytes, size_t piece,
                            const std::string& algorithmOverride) {
  const Span span = spanOf(args, pieceBytes, piece);
  const size_t n = static_cast<size_t>(ctx.nranks());
  const size_t blockBytes = args.count * spcclTypeSize(args.datatype);
  CollArgs part = args;
  part.count = span.bytes / spcclTypeSize(args.datatype);
  part.sendbuff = shifted(args.sendbuff, span.firstByte);
  part.recvbuff = const_cast<char*>(shifted(args.recvbuff, span.firstByte));
  if (args.type != CollType::AllGather && args.type != CollType::ReduceScatter)
    return runDenseCollective(ctx, part, algorithmOverride);
  // The piece's n blocks, contiguous: the all-gather's output, the
  // reduce-scatter's input.
  char* blocks = nullptr;
  SPCCL_CHECK(acquireScratch(ctx, n * span.bytes, kScratchPieceBlocks, &blocks));
  if (args.type == CollType::ReduceScatter) {
    for (size_t r = 0; r < n; ++r)
      std::memcpy(blocks + r * span.bytes, shifted(args.sendbuff, r * blockBytes + span.firstByte),
                  span.bytes);
    part.sendbuff = blocks;
    return runDenseCollective(ctx, part, algorithmOverride);
  }
  part.recvbuff = blocks;
  SPCCL_CHECK(runDenseCollective(ctx, part, algorithmOverride));
  for (size_t r = 0; r < n; ++r)
    std::memcpy(bytePointer(args.recvbuff) + r * blockBytes + span.firstByte,
                blocks + r * span.bytes, span.bytes);
  return spcclSuccess;
}

}  // namespace spccl
