// The root agreement is a dissemination all-reduce (the pattern of
// dissemination_barrier.cc: in round k rank r sends to r+2^k and hears
// from r-2^k) of the lowest and highest root passed. After ceil(log2 n)
// rounds every rank knows both, so every rank reaches the same verdict on
// its own: a disagreement fails the call on all ranks at once, with the
// same message, and leaves the communicator usable, since every rank sent
// and received the same messages.
//
// Checking neighbours only (each rank compares its root with its ring
// predecessor's, one round) is not enough: the ranks that find a
// difference abort, but a rank whose predecessor agreed goes on, and when
// its part of the call only sends (a broadcast or scatter root in its own
// view) it returns success before the abort frames reach it
// (tests/faults/test_root_agreement.cc caught this on tcp).
#include "coll/root_agreement.h"

#include <cinttypes>
#include <cstdint>

#include "base/check.h"
#include "coll/partition.h"
#include "coll/schedule_support.h"

namespace spccl {

namespace {

// The lowest and highest root heard of, each with the lowest rank that
// passed it (so that every rank names the same two ranks). Sent as bytes
// (same-architecture peers, as the frame header).
struct RootExtremes {
  int32_t lowRoot, lowRank;
  int32_t highRoot, highRank;

  void merge(const RootExtremes& other) {
    if (other.lowRoot < lowRoot || (other.lowRoot == lowRoot && other.lowRank < lowRank)) {
      lowRoot = other.lowRoot;
      lowRank = other.lowRank;
    }
    if (other.highRoot > highRoot || (other.highRoot == highRoot && other.highRank < highRank)) {
      highRoot = other.highRoot;
      highRank = other.highRank;
    }
  }
};

}  // namespace

spcclResult_t agreeOnRoot(CollContext& call, const RootedCallNames& names) {
  const int n = call.nranks(), me = call.rank(), root = call.signature().root;
  if (n == 1 || root < 0 || !call.checksRoots()) return spcclSuccess;
  // The exchange's frames carry the call's signature without its root: the
  // engine still checks kind, count, type and op, but a root mismatch in
  // the frames would fail only the ranks that happened to receive a
  // differing frame, and the others could return success (see the top).
  CollSignature unrooted = call.signature();
  unrooted.root = -1;
  CollContext exchange(call, unrooted);
  RootExtremes known{root, me, root, me};
  for (int distance = 1; distance < n; distance *= 2) {
    const int from = positiveMod(me - distance, n);
    RootExtremes heard{};
    size_t received = 0;
    SPCCL_CHECK(exchange.sendRecv((me + distance) % n, &known, sizeof(known), from, &heard,
                                  sizeof(heard), &received));
    SPCCL_CHECK(checkReceivedBytes(exchange, from, received, sizeof(heard), "root agreement"));
    known.merge(heard);
  }
  if (known.lowRoot == known.highRoot) return spcclSuccess;
  // Name the two ranks in rank order, so the message reads the same everywhere.
  const bool lowFirst = known.lowRank < known.highRank;
  const int firstRank = lowFirst ? known.lowRank : known.highRank;
  const int firstRoot = lowFirst ? known.lowRoot : known.highRoot;
  const int secondRank = lowFirst ? known.highRank : known.lowRank;
  const int secondRoot = lowFirst ? known.highRoot : known.lowRoot;
  return SPCCL_FAIL(spcclInvalidUsage,
                    "%s: %s mismatch at call #%" PRIu64
                    ": rank %d passed %s=%d but rank %d passed %s=%d "
                    "(this is rank %d, %s=%d); no data moved and the call fails on every rank "
                    "(SPCCL_CHECK_ROOTS)",
                    names.call, names.argument, call.seq(), firstRank, names.argument, firstRoot,
                    secondRank, names.argument, secondRoot, me, names.argument, root);
}

}  // namespace spccl
