// coll_check: every dense collective, data type, op, size and buffer form
// checked against a reference this rank computes on its own.
//
// Launch one per rank (spcclrun -n N -- coll_check [--quick] [--max-count N]
// [--barrier-only]).
// Inputs are small integers chosen per op so that every partial result is
// exact in every type (bf16 holds integers up to 256, so sums stay within
// +-3 per rank and products are +-powers of two; exact for N <= 80 ranks),
// which makes the correct output unique whatever the reduction order: each
// rank compares its output bit for bit. A last pass sums inexact floats and
// compares a hash of the result across ranks and across two runs, which
// checks bitwise agreement and run-to-run reproducibility where rounding
// does depend on the order.
//
// Uses only the public API (include/spccl.h).
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../common/coll_reference.h"
#include "spccl.h"

namespace {

using namespace spccl::coll_reference;

// ---- values (tests/common/coll_reference.h) ----

const spcclDataType_t kQuickTypes[] = {spcclInt8, spcclUint32, spcclFloat16, spcclFloat32,
                                       spcclBfloat16};
const spcclRedOp_t kQuickOps[] = {spcclSum, spcclMax, spcclAvg};

// ---- the checker ----

struct Form {
  const char* collective;
  spcclDataType_t type;
  spcclRedOp_t op;
  size_t count;
  bool inPlace;
  int root;
};

class Checker {
 public:
  Checker(spcclComm_t comm, int rank, int nranks) : comm_(comm), rank_(rank), nranks_(nranks) {}

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  long checks() const { return checks_; }
  long wrong() const { return wrong_; }

  // A failed call leaves the communicator unusable: report and stop.
  void call(spcclResult_t result, const Form& form) {
    if (result == spcclSuccess) return;
    std::fprintf(stderr, "coll_check: rank %d: %s(%s, %s, count=%zu, %s) failed: %s: %s\n", rank_,
                 form.collective, spcclTypeName(form.type), spcclOpName(form.op), form.count,
                 form.inPlace ? "in place" : "out of place", spcclGetErrorString(result),
                 spcclGetLastError(comm_));
    std::printf("coll_check: rank %d: %ld checks, %ld wrong (aborted)\n", rank_, checks_,
                wrong_ + 1);
    std::fflush(stdout);
    spcclCommAbort(comm_);
    std::exit(2);
  }

  // Compares `count` elements of `actual` with `expected` bit for bit.
  void expectEqual(const Form& form, const std::vector<char>& expected, const void* actual,
                   size_t count, const char* what = "") {
    ++checks_;
    const size_t es = spcclTypeSize(form.type);
    const char* got = static_cast<const char*>(actual);
    for (size_t i = 0; i < count; ++i) {
      if (std::memcmp(got + i * es, expected.data() + i * es, es) == 0) continue;
      ++wrong_;
      if (wrong_ <= kMaxReports)
        std::fprintf(stderr,
                     "coll_check: rank %d: %s(%s, %s, count=%zu, %s, root=%d)%s: element %zu is "
                     "%g, expected %g\n",
                     rank_, form.collective, spcclTypeName(form.type), spcclOpName(form.op),
                     form.count, form.inPlace ? "in place" : "out of place", form.root, what, i,
                     load(form.type, got, i), load(form.type, expected.data(), i));
      return;
    }
  }

  // Counts one check; reports `what` when `holds` is false.
  void expect(const Form& form, bool holds, const std::string& what) {
    ++checks_;
    if (holds) return;
    ++wrong_;
    if (wrong_ <= kMaxReports)
      std::fprintf(stderr, "coll_check: rank %d: %s: %s\n", rank_, form.collective, what.c_str());
  }

  spcclComm_t comm() const { return comm_; }

 private:
  static constexpr long kMaxReports = 20;
  spcclComm_t comm_;
  int rank_;
  int nranks_;
  long checks_ = 0;
  long wrong_ = 0;
};

// A buffer of `count` elements (at least one, so pointers are never null),
// filled with a pattern no collective produces.
std::vector<char> buffer(spcclDataType_t type, size_t count) {
  return std::vector<char>((count == 0 ? 1 : count) * spcclTypeSize(type), '\x5a');
}

void checkAllReduce(Checker& c, spcclDataType_t type, spcclRedOp_t op, size_t count, bool inPlace) {
  Form form{"AllReduce", type, op, count, inPlace, -1};
  std::vector<char> send = buffer(type, count), recv = buffer(type, count),
                    expected = buffer(type, count);
  for (size_t i = 0; i < count; ++i) {
    store(type, send.data(), i, reductionInput(op, c.rank(), i, c.nranks()));
    store(type, expected.data(), i, reductionReference(type, op, i, c.nranks()));
  }
  char* out = inPlace ? send.data() : recv.data();
  c.call(spcclAllReduce(send.data(), out, count, type, op, c.comm(), nullptr), form);
  c.expectEqual(form, expected, out, count);
}

void checkReduce(Checker& c, spcclDataType_t type, spcclRedOp_t op, size_t count, bool inPlace,
                 int root) {
  Form form{"Reduce", type, op, count, inPlace, root};
  std::vector<char> send = buffer(type, count), recv = buffer(type, count),
                    expected = buffer(type, count);
  for (size_t i = 0; i < count; ++i) {
    store(type, send.data(), i, reductionInput(op, c.rank(), i, c.nranks()));
    store(type, expected.data(), i, reductionReference(type, op, i, c.nranks()));
  }
  char* out = inPlace ? send.data() : recv.data();
  c.call(spcclReduce(send.data(), out, count, type, op, root, c.comm(), nullptr), form);
  if (c.rank() == root) c.expectEqual(form, expected, out, count);
}

void checkReduceScatter(Checker& c, spcclDataType_t type, spcclRedOp_t op, size_t count,
                        bool inPlace) {
  Form form{"ReduceScatter", type, op, count, inPlace, -1};
  const size_t total = count * c.nranks();
  std::vector<char> send = buffer(type, total), recv = buffer(type, count),
                    expected = buffer(type, count);
  for (size_t i = 0; i < total; ++i)
    store(type, send.data(), i, reductionInput(op, c.rank(), i, c.nranks()));
  for (size_t i = 0; i < count; ++i)
    store(type, expected.data(), i, reductionReference(type, op, c.rank() * count + i, c.nranks()));
  char* out = inPlace ? send.data() + c.rank() * count * spcclTypeSize(type) : recv.data();
  c.call(spcclReduceScatter(send.data(), out, count, type, op, c.comm(), nullptr), form);
  c.expectEqual(form, expected, out, count);
}

void checkBroadcast(Checker& c, spcclDataType_t type, size_t count, bool inPlace, int root) {
  Form form{"Broadcast", type, spcclSum, count, inPlace, root};
  std::vector<char> send = buffer(type, count), recv = buffer(type, count),
                    expected = buffer(type, count);
  for (size_t i = 0; i < count; ++i) {
    if (c.rank() == root) store(type, send.data(), i, tagValue(root, 0, i));
    store(type, expected.data(), i, tagValue(root, 0, i));
  }
  char* out = inPlace ? send.data() : recv.data();
  c.call(spcclBroadcast(send.data(), out, count, type, root, c.comm(), nullptr), form);
  c.expectEqual(form, expected, out, count);
}

void checkAllGather(Checker& c, spcclDataType_t type, size_t count, bool inPlace) {
  Form form{"AllGather", type, spcclSum, count, inPlace, -1};
  const size_t total = count * c.nranks();
  std::vector<char> send = buffer(type, count), recv = buffer(type, total),
                    expected = buffer(type, total);
  char* in = inPlace ? recv.data() + c.rank() * count * spcclTypeSize(type) : send.data();
  for (size_t i = 0; i < count; ++i) store(type, in, i, tagValue(c.rank(), 0, i));
  for (int r = 0; r < c.nranks(); ++r)
    for (size_t i = 0; i < count; ++i)
      store(type, expected.data(), r * count + i, tagValue(r, 0, i));
  c.call(spcclAllGather(in, recv.data(), count, type, c.comm(), nullptr), form);
  c.expectEqual(form, expected, recv.data(), total);
}

void checkAllToAll(Checker& c, spcclDataType_t type, size_t count, bool inPlace) {
  Form form{"AllToAll", type, spcclSum, count, inPlace, -1};
  const size_t total = count * c.nranks();
  std::vector<char> send = buffer(type, total), recv = buffer(type, total),
                    expected = buffer(type, total);
  for (int peer = 0; peer < c.nranks(); ++peer) {
    for (size_t i = 0; i < count; ++i) {
      store(type, send.data(), peer * count + i, tagValue(c.rank(), peer, i));
      store(type, expected.data(), peer * count + i, tagValue(peer, c.rank(), i));
    }
  }
  char* out = inPlace ? send.data() : recv.data();
  c.call(spcclAllToAll(send.data(), out, count, type, c.comm(), nullptr), form);
  c.expectEqual(form, expected, out, total);
}

void checkAllToAllv(Checker& c, spcclDataType_t type, size_t count) {
  Form form{"AllToAllv", type, spcclSum, count, false, -1};
  const int n = c.nranks();
  std::vector<size_t> sendcounts(n), sdispls(n), recvcounts(n), rdispls(n);
  size_t sendTotal = 0, recvTotal = 0;
  for (int peer = 0; peer < n; ++peer) {  // one element of gap between blocks
    sendcounts[peer] = variableCount(count, c.rank(), peer);
    sdispls[peer] = sendTotal;
    sendTotal += sendcounts[peer] + 1;
    recvcounts[peer] = variableCount(count, peer, c.rank());
    rdispls[peer] = recvTotal;
    recvTotal += recvcounts[peer] + 1;
  }
  std::vector<char> send = buffer(type, sendTotal), recv = buffer(type, recvTotal),
                    expected = buffer(type, recvTotal);
  for (int peer = 0; peer < n; ++peer) {
    for (size_t i = 0; i < sendcounts[peer]; ++i)
      store(type, send.data(), sdispls[peer] + i, tagValue(c.rank(), peer, i));
    for (size_t i = 0; i < recvcounts[peer]; ++i)
      store(type, expected.data(), rdispls[peer] + i, tagValue(peer, c.rank(), i));
  }
  // The gaps must be left alone.
  for (int peer = 0; peer < n; ++peer)
    std::memset(expected.data() + (rdispls[peer] + recvcounts[peer]) * spcclTypeSize(type), '\x5a',
                spcclTypeSize(type));
  c.call(spcclAllToAllv(send.data(), sendcounts.data(), sdispls.data(), recv.data(),
                        recvcounts.data(), rdispls.data(), type, c.comm(), nullptr),
         form);
  c.expectEqual(form, expected, recv.data(), recvTotal);
}

void checkSendRecvRing(Checker& c, spcclDataType_t type, size_t count) {
  if (c.nranks() < 2) return;
  Form form{"SendRecv", type, spcclSum, count, false, -1};
  const int next = (c.rank() + 1) % c.nranks();
  const int previous = (c.rank() + c.nranks() - 1) % c.nranks();
  std::vector<char> send = buffer(type, count), recv = buffer(type, count),
                    expected = buffer(type, count);
  for (size_t i = 0; i < count; ++i) {
    store(type, send.data(), i, tagValue(c.rank(), next, i));
    store(type, expected.data(), i, tagValue(previous, c.rank(), i));
  }
  c.call(spcclGroupStart(), form);
  c.call(spcclSend(send.data(), count, type, next, c.comm(), nullptr), form);
  c.call(spcclRecv(recv.data(), count, type, previous, c.comm(), nullptr), form);
  c.call(spcclGroupEnd(), form);
  c.expectEqual(form, expected, recv.data(), count);
}

int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// This kernel's boot, whose CLOCK_MONOTONIC every rank must share for
// their times to compare (netns hosts do; other machines do not).
uint64_t bootHash() {
  char id[64] = {};
  if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    size_t got = std::fread(id, 1, sizeof(id) - 1, f);
    std::fclose(f);
    return fnv1a(id, got);
  }
  return 0;
}

// What a barrier guarantees: no rank returns before every rank has entered.
// One rank (a different one each round) enters kLate after the others;
// every rank's return must come after every rank's entry, by steady_clock
// (CLOCK_MONOTONIC), one clock for ranks on one host (spcclrun, and
// launch_foreign.sh's mpirun and torchrun, start them locally).
void checkBarrier(Checker& c) {
  constexpr auto kLate = std::chrono::milliseconds(100);
  Form form{"Barrier", spcclInt8, spcclSum, 0, false, -1};
  Form gather{"AllGather (barrier times)", spcclInt64, spcclSum, 2, false, -1};
  uint64_t boot = bootHash();
  std::vector<uint64_t> boots(static_cast<size_t>(c.nranks()));
  Form bootGather{"AllGather (boot ids)", spcclUint64, spcclSum, 1, false, -1};
  c.call(spcclAllGather(&boot, boots.data(), 1, spcclUint64, c.comm(), nullptr), bootGather);
  for (uint64_t other : boots) {
    if (other == boot) continue;
    if (c.rank() == 0)
      std::printf("coll_check: barrier timing not checked: ranks on other hosts\n");
    for (int round = 0; round < 3; ++round) c.call(spcclBarrier(c.comm(), nullptr), form);
    return;
  }
  for (int round = 0; round < 3; ++round) {
    const int late = (c.nranks() - 1 + round) % c.nranks();
    if (c.rank() == late) std::this_thread::sleep_for(kLate);
    int64_t times[2];  // entry, return
    times[0] = steadyNs();
    c.call(spcclBarrier(c.comm(), nullptr), form);
    times[1] = steadyNs();
    std::vector<int64_t> all(2 * static_cast<size_t>(c.nranks()));
    c.call(spcclAllGather(times, all.data(), 2, spcclInt64, c.comm(), nullptr), gather);
    int64_t lastEntry = all[0];
    int lastRank = 0;
    for (int r = 1; r < c.nranks(); ++r) {
      if (all[2 * r] <= lastEntry) continue;
      lastEntry = all[2 * r];
      lastRank = r;
    }
    c.expect(form, times[1] >= lastEntry,
             "returned " + std::to_string((lastEntry - times[1]) / 1000) + " us before rank " +
                 std::to_string(lastRank) + " entered (round " + std::to_string(round) + ", rank " +
                 std::to_string(late) + " entered late)");
  }
}

// Inexact float sums: the bits depend on the reduction order, so every
// rank must agree and a second run must give the same bits.
void checkBitwiseAgreement(Checker& c, size_t count) {
  for (spcclDataType_t type : {spcclFloat32, spcclFloat16, spcclBfloat16, spcclFloat64}) {
    Form form{"AllReduce (inexact)", type, spcclSum, count, false, -1};
    const size_t es = spcclTypeSize(type);
    std::vector<char> send = buffer(type, count), first = buffer(type, count),
                      second = buffer(type, count);
    // Thirds and sevenths round in every type, so the order shows.
    for (size_t i = 0; i < count; ++i) {
      double v = (c.rank() + 1) / 3.0 + static_cast<double>(i % 13) / 7.0;
      float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      char* at = send.data() + i * es;
      if (type == spcclFloat64) std::memcpy(at, &v, 8);
      if (type == spcclFloat32) std::memcpy(at, &f, 4);
      // Truncations of f; any fixed non-integer values will do.
      uint16_t half = type == spcclFloat16 ? floatToHalf(f) : static_cast<uint16_t>(bits >> 16);
      if (type == spcclFloat16 || type == spcclBfloat16) std::memcpy(at, &half, 2);
    }
    c.call(spcclAllReduce(send.data(), first.data(), count, type, spcclSum, c.comm(), nullptr),
           form);
    c.call(spcclAllReduce(send.data(), second.data(), count, type, spcclSum, c.comm(), nullptr),
           form);
    c.expectEqual(form, first, second.data(), count, " second run");
    // Everyone's hash of the first result must equal rank 0's.
    uint64_t hash = fnv1a(first.data(), count * es);
    std::vector<uint64_t> hashes(c.nranks());
    Form gather{"AllGather (hashes)", spcclUint64, spcclSum, 1, false, -1};
    c.call(spcclAllGather(&hash, hashes.data(), 1, spcclUint64, c.comm(), nullptr), gather);
    std::vector<char> expected(hashes.size() * 8);
    for (size_t r = 0; r < hashes.size(); ++r) std::memcpy(expected.data() + r * 8, &hashes[0], 8);
    c.expectEqual(gather, expected, hashes.data(), hashes.size(),
                  " result hash differs between ranks");
  }
}

struct Options {
  bool quick = false;
  bool barrierOnly = false;
  size_t maxCount = 0;
};

bool parseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick") {
      options->quick = true;
    } else if (arg == "--barrier-only") {
      options->barrierOnly = true;
    } else if (arg == "--max-count" && i + 1 < argc) {
      options->maxCount = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: coll_check [--quick] [--max-count N] [--barrier-only]\n");
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parseOptions(argc, argv, &options)) return 2;
  spcclComm_t comm = nullptr;
  spcclResult_t result = spcclCommInitFromEnv(&comm, nullptr);
  if (result != spcclSuccess) {
    std::fprintf(stderr, "coll_check: spcclCommInitFromEnv failed: %s: %s\n",
                 spcclGetErrorString(result), spcclGetLastError(nullptr));
    return 2;
  }
  int rank = 0, nranks = 0;
  spcclCommUserRank(comm, &rank);
  spcclCommCount(comm, &nranks);
  Checker c(comm, rank, nranks);

  std::vector<size_t> counts = options.quick ? std::vector<size_t>{0, 1, 7, 4097}
                                             : std::vector<size_t>{0, 1, 7, 1023, 4097, 65537};
  if (options.maxCount > 0) counts.push_back(options.maxCount);
  std::vector<spcclDataType_t> types(std::begin(kAllTypes), std::end(kAllTypes));
  std::vector<spcclRedOp_t> ops(std::begin(kAllOps), std::end(kAllOps));
  if (options.quick) {
    types.assign(std::begin(kQuickTypes), std::end(kQuickTypes));
    ops.assign(std::begin(kQuickOps), std::end(kQuickOps));
  }

  int round = 0;  // rotates the root
  if (options.barrierOnly) counts.clear();
  for (size_t count : counts) {
    for (spcclDataType_t type : types) {
      for (bool inPlace : {false, true}) {
        for (spcclRedOp_t op : ops) {
          checkAllReduce(c, type, op, count, inPlace);
          checkReduce(c, type, op, count, inPlace, round++ % nranks);
          checkReduceScatter(c, type, op, count, inPlace);
        }
        checkBroadcast(c, type, count, inPlace, round++ % nranks);
        checkAllGather(c, type, count, inPlace);
        checkAllToAll(c, type, count, inPlace);
      }
      checkAllToAllv(c, type, count);
      checkSendRecvRing(c, type, count);
    }
  }
  checkBarrier(c);
  if (!options.barrierOnly) {
    for (size_t count : {size_t{1023}, size_t{65537}}) checkBitwiseAgreement(c, count);
  }

  std::printf("coll_check: rank %d: %ld checks, %ld wrong\n", rank, c.checks(), c.wrong());
  std::fflush(stdout);
  spcclCommDestroy(comm);
  return c.wrong() == 0 ? 0 : 1;
}
