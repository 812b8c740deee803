// The migration collectives with real processes: broadcast and reduce
// against references for every type and op on non-power-of-two rank
// counts, the merged migration all-reduce against reduce-then-all-reduce,
// scatter/gather, the straggler's traffic, bad arguments and mismatched
// calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "../common/fork_ranks.h"
#include "migrate_test_support.h"
#include "spccl.h"

using namespace spccl::testing;
using namespace spccl::migrate_test;

namespace {

constexpr int kTimeoutMs = 20000;

// Runs body on nranks forked ranks; every rank must exit kChildOk.
void onRanks(int nranks, const std::function<bool(spcclComm_t, int)>& body) {
  auto outcomes = forkRanks(nranks, [&](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(nranks, id, rank, kTimeoutMs);
    bool ok = body(comm, rank);
    spcclCommDestroy(comm);
    return ok ? kChildOk : kChildWrongResult;
  });
  for (int r = 0; r < nranks; ++r)
    EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r << " of " << nranks;
}

bool report(bool ok, int rank, const std::string& what) {
  if (!ok) std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  return ok;
}

double valueOf(int rank, size_t i, spcclRedOp_t op) {
  // Products stay within every type's exact range with factors of 1 and 2.
  if (op == spcclProd) return 1.0 + static_cast<double>((rank + i) % 2);
  return 1.0 + static_cast<double>((rank * 7 + i * 3) % 5);
}

double reduceReference(int nranks, size_t i, spcclRedOp_t op) {
  double acc = valueOf(0, i, op);
  for (int r = 1; r < nranks; ++r) {
    const double v = valueOf(r, i, op);
    switch (op) {
      case spcclSum:
        acc += v;
        break;
      case spcclProd:
        acc *= v;
        break;
      case spcclMax:
        acc = std::max(acc, v);
        break;
      case spcclMin:
        acc = std::min(acc, v);
        break;
      default:
        break;
    }
  }
  return acc;
}

constexpr spcclRedOp_t kExactOps[] = {spcclSum, spcclProd, spcclMax, spcclMin};

TEST(MigrateCollectives, BroadcastFromEveryStragglerEveryType) {
  for (int nranks : {3, 5}) {
    onRanks(nranks, [nranks](spcclComm_t comm, int rank) {
      bool ok = true;
      for (spcclDataType_t type : kAllTypes) {
        for (int straggler = 0; straggler < nranks; ++straggler) {
          // Large enough to be cut into several pipeline slices.
          const size_t count = 100003;
          auto expected =
              typedBuffer(type, count, [&](size_t i) { return double((i + straggler) % 97); });
          std::vector<unsigned char> buffer =
              rank == straggler ? expected : std::vector<unsigned char>(expected.size(), 0xAB);
          spcclResult_t res =
              spcclMigrateBroadcast(buffer.data(), count, type, straggler, comm, nullptr);
          ok &= report(res == spcclSuccess, rank, spcclGetLastError(comm));
          ok &= report(buffer == expected, rank,
                       std::string("broadcast mismatch, type ") + spcclTypeName(type));
        }
      }
      return ok;
    });
  }
}

TEST(MigrateCollectives, ReduceMatchesReferenceEveryTypeAndOp) {
  for (int nranks : {3, 5}) {
    onRanks(nranks, [nranks](spcclComm_t comm, int rank) {
      bool ok = true;
      const size_t count = 4099;
      for (spcclDataType_t type : kAllTypes) {
        for (spcclRedOp_t op : kExactOps) {
          const int dest = (static_cast<int>(type) + static_cast<int>(op)) % nranks;
          auto send = typedBuffer(type, count, [&](size_t i) { return valueOf(rank, i, op); });
          auto expected =
              typedBuffer(type, count, [&](size_t i) { return reduceReference(nranks, i, op); });
          std::vector<unsigned char> recv(send.size(), 0);
          spcclResult_t res =
              spcclMigrateReduce(send.data(), recv.data(), count, type, op, dest, comm, nullptr);
          ok &= report(res == spcclSuccess, rank, spcclGetLastError(comm));
          if (rank == dest)
            ok &= report(
                recv == expected, rank,
                std::string("reduce mismatch, ") + spcclTypeName(type) + " " + spcclOpName(op));
          // In place at the destination.
          std::vector<unsigned char> inPlace = send;
          res = spcclMigrateReduce(inPlace.data(), inPlace.data(), count, type, op, dest, comm,
                                   nullptr);
          ok &= report(res == spcclSuccess, rank, spcclGetLastError(comm));
          if (rank == dest) ok &= report(inPlace == expected, rank, "in-place reduce mismatch");
        }
      }
      return ok;
    });
  }
}

// The merged form equals the two-collective form: the helpers' migrated
// results reduced onto the straggler's own window, then a plain
// all-reduce. For sums it also equals the arithmetic directly.
TEST(MigrateCollectives, MergedAllReduceEqualsReduceThenAllReduce) {
  for (int nranks : {3, 4, 5}) {
    onRanks(nranks, [nranks](spcclComm_t comm, int rank) {
      bool ok = true;
      const size_t count = 3001, window = 700, offset = 1200;
      for (spcclDataType_t type : kAllTypes) {
        for (spcclRedOp_t op : kExactOps) {
          const int straggler = static_cast<int>(type) % nranks;
          const size_t es = spcclTypeSize(type);
          auto contribution =
              typedBuffer(type, count, [&](size_t i) { return valueOf(rank, i, op); });
          // A helper's partial result covers the whole window (as a
          // partial sum over its slice of columns does); the straggler has
          // none.
          auto migrated =
              typedBuffer(type, window, [&](size_t i) { return valueOf(rank + 3, i, op); });
          const size_t myCount = rank == straggler ? 0 : window;

          std::vector<unsigned char> merged(count * es);
          spcclResult_t res =
              spcclMigrateAllReduce(contribution.data(), merged.data(), count, migrated.data(),
                                    myCount, offset, type, op, comm, nullptr);
          ok &= report(res == spcclSuccess, rank, spcclGetLastError(comm));

          // Two collectives: reduce onto the straggler's window, all-reduce.
          std::vector<unsigned char> part = migrated;
          if (rank == straggler)
            part.assign(contribution.begin() + offset * es,
                        contribution.begin() + (offset + window) * es);
          std::vector<unsigned char> collected(window * es);
          res = spcclMigrateReduce(part.data(), collected.data(), window, type, op, straggler, comm,
                                   nullptr);
          ok &= report(res == spcclSuccess, rank, spcclGetLastError(comm));
          std::vector<unsigned char> mine = contribution;
          if (rank == straggler)
            std::copy(collected.begin(), collected.end(), mine.begin() + offset * es);
          std::vector<unsigned char> twoStep(count * es);
          res = spcclAllReduce(mine.data(), twoStep.data(), count, type, op, comm, nullptr);
          ok &= report(res == spcclSuccess, rank, spcclGetLastError(comm));
          ok &= report(merged == twoStep, rank,
                       std::string("merged != reduce + all-reduce, ") + spcclTypeName(type) + " " +
                           spcclOpName(op));
          if (op != spcclSum) continue;
          auto expected = typedBuffer(type, count, [&](size_t i) {
            double acc = reduceReference(nranks, i, op);
            if (i >= offset && i < offset + window)
              for (int r = 0; r < nranks; ++r)
                if (r != straggler) acc += valueOf(r + 3, i - offset, op);
            return acc;
          });
          ok &= report(merged == expected, rank,
                       std::string("merged sum != arithmetic, ") + spcclTypeName(type));
        }
      }
      return ok;
    });
  }
}

// In place, and Avg (sum, then one division of the whole result).
TEST(MigrateCollectives, MergedAllReduceInPlaceAndAverage) {
  onRanks(3, [](spcclComm_t comm, int rank) {
    const int straggler = 1;
    std::vector<double> buffer(10, static_cast<double>(rank + 1));  // 1, 2, 3
    std::vector<double> migrated(4, 3.0);
    spcclResult_t res =
        spcclMigrateAllReduce(buffer.data(), buffer.data(), buffer.size(), migrated.data(),
                              rank == straggler ? 0 : 4, 6, spcclFloat64, spcclAvg, comm, nullptr);
    bool ok = report(res == spcclSuccess, rank, spcclGetLastError(comm));
    for (size_t i = 0; i < buffer.size(); ++i) {
      const double expected = i >= 6 ? (6.0 + 2 * 3.0) / 3 : 6.0 / 3;
      ok &= report(buffer[i] == expected, rank, "avg element " + std::to_string(i));
    }
    return ok;
  });
}

// The non-blocking forms give the blocking forms' results, queued back to
// back and completed in issue order whatever order they are waited in,
// with a blocking call issued after them running after them.
TEST(MigrateCollectives, NonBlockingFormsMatchBlockingOnes) {
  onRanks(3, [](spcclComm_t comm, int rank) {
    const int straggler = 2;
    const size_t count = 5000, window = 900, offset = 1000;
    auto shed = [&](int who) {
      std::vector<float> v(count);
      for (size_t i = 0; i < count; ++i) v[i] = who == straggler ? float(i % 97) : -1.0f;
      return v;
    };
    std::vector<float> contribution(count), migrated(window);
    for (size_t i = 0; i < count; ++i) contribution[i] = float((rank * 5 + i) % 11);
    for (size_t i = 0; i < window; ++i) migrated[i] = float((rank + i) % 7);
    const size_t myWindow = rank == straggler ? 0 : window;

    std::vector<float> blockingShed = shed(rank), blockingSum(count), blockingMerged(count);
    bool ok = report(spcclMigrateBroadcast(blockingShed.data(), count, spcclFloat32, straggler,
                                           comm, nullptr) == spcclSuccess,
                     rank, spcclGetLastError(comm));
    ok &= report(spcclMigrateReduce(contribution.data(), blockingSum.data(), count, spcclFloat32,
                                    spcclSum, straggler, comm, nullptr) == spcclSuccess,
                 rank, spcclGetLastError(comm));
    ok &= report(spcclMigrateAllReduce(contribution.data(), blockingMerged.data(), count,
                                       migrated.data(), myWindow, offset, spcclFloat32, spcclSum,
                                       comm, nullptr) == spcclSuccess,
                 rank, spcclGetLastError(comm));

    std::vector<float> queuedShed = shed(rank), queuedSum(count), queuedMerged(count);
    spcclRequest_t requests[3] = {};
    ok &= report(spcclImigrateBroadcast(queuedShed.data(), count, spcclFloat32, straggler, comm,
                                        &requests[0]) == spcclSuccess,
                 rank, spcclGetLastError(comm));
    ok &= report(spcclImigrateReduce(contribution.data(), queuedSum.data(), count, spcclFloat32,
                                     spcclSum, straggler, comm, &requests[1]) == spcclSuccess,
                 rank, spcclGetLastError(comm));
    ok &= report(spcclImigrateAllReduce(contribution.data(), queuedMerged.data(), count,
                                        migrated.data(), myWindow, offset, spcclFloat32, spcclSum,
                                        comm, &requests[2]) == spcclSuccess,
                 rank, spcclGetLastError(comm));
    // A blocking call after them runs after them (issue order).
    float one = 1.0f, ranks = 0.0f;
    ok &= report(
        spcclAllReduce(&one, &ranks, 1, spcclFloat32, spcclSum, comm, nullptr) == spcclSuccess &&
            ranks == 3.0f,
        rank, "all-reduce after the queued calls");
    for (int i = 2; i >= 0; --i)
      ok &= report(spcclWait(requests[i]) == spcclSuccess, rank, spcclGetLastError(comm));
    ok &= report(queuedShed == blockingShed, rank, "Imigrate broadcast != blocking broadcast");
    if (rank == straggler)
      ok &= report(queuedSum == blockingSum, rank, "Imigrate reduce != blocking reduce");
    ok &= report(queuedMerged == blockingMerged, rank, "Imigrate all-reduce != blocking one");
    ok &= report(blockingShed == shed(straggler), rank, "broadcast did not deliver the shed data");
    return ok;
  });
}

// Scatter then gather returns the root's buffer; every rank gets its block.
TEST(MigrateCollectives, ScatterGatherRoundTrip) {
  for (int nranks : {2, 3, 5}) {
    onRanks(nranks, [nranks](spcclComm_t comm, int rank) {
      bool ok = true;
      for (spcclDataType_t type : kAllTypes) {
        for (int root = 0; root < nranks; ++root) {
          const size_t block = 1031, es = spcclTypeSize(type);
          auto all = typedBuffer(type, block * nranks, [&](size_t i) { return double(i % 113); });
          std::vector<unsigned char> mine(block * es, 0);
          spcclResult_t res = spcclScatter(rank == root ? all.data() : nullptr, mine.data(), block,
                                           type, root, comm, nullptr);
          ok &= report(res == spcclSuccess, rank, spcclGetLastError(comm));
          ok &= report(std::equal(mine.begin(), mine.end(), all.begin() + rank * block * es), rank,
                       "scatter block");
          std::vector<unsigned char> back(rank == root ? all.size() : 0, 0);
          res = spcclGather(mine.data(), rank == root ? back.data() : nullptr, block, type, root,
                            comm, nullptr);
          ok &= report(res == spcclSuccess, rank, spcclGetLastError(comm));
          if (rank == root) ok &= report(back == all, rank, "gather");
        }
      }
      return ok;
    });
  }
}

// Payload bytes a rank moved in a call on 8 ranks: the data, plus the root
// agreement's (src/coll/root_agreement.h: every rank sends and receives
// one 16-byte message per round, ceil(log2 8) = 3 rounds), which is not
// migrated data.
bool movesDataOnce(uint64_t measured, uint64_t dataBytes) {
  constexpr uint64_t kAgreementBytes = 3 * 16;
  return measured == dataBytes + kAgreementBytes;
}

// The point of broadcast-reduce (section IV-A): the straggler sends each
// migrated byte once, where scatter sends every helper's share itself and
// a binomial broadcast sends the whole buffer to each of its children.
TEST(MigrateCollectives, StragglerSendsEachByteOnce) {
  onRanks(8, [](spcclComm_t comm, int rank) {
    const int straggler = 3;
    const size_t count = 1 << 18;  // 1 MiB of float32
    std::vector<float> data(count, static_cast<float>(rank));
    spcclCounters_t before{}, after{};
    spcclCommGetCounters(comm, &before);
    spcclResult_t res =
        spcclMigrateBroadcast(data.data(), count, spcclFloat32, straggler, comm, nullptr);
    spcclCommGetCounters(comm, &after);
    bool ok = report(res == spcclSuccess, rank, spcclGetLastError(comm));
    const uint64_t sent = after.bytesSent - before.bytesSent;
    const uint64_t received = after.bytesReceived - before.bytesReceived;
    const uint64_t bytes = count * sizeof(float);
    if (rank == straggler)
      ok &= report(movesDataOnce(sent, bytes), rank, "straggler sent " + std::to_string(sent));
    else
      ok &= report(movesDataOnce(received, bytes), rank,
                   "helper received " + std::to_string(received));
    // Reduce back: the straggler receives each byte once.
    spcclCommGetCounters(comm, &before);
    res = spcclMigrateReduce(data.data(), data.data(), count, spcclFloat32, spcclSum, straggler,
                             comm, nullptr);
    spcclCommGetCounters(comm, &after);
    ok &= report(res == spcclSuccess, rank, spcclGetLastError(comm));
    if (rank == straggler)
      ok &= report(movesDataOnce(after.bytesReceived - before.bytesReceived, bytes) &&
                       movesDataOnce(after.bytesSent - before.bytesSent, 0),
                   rank, "straggler reduce traffic");
    return ok;
  });
}

void expectInvalid(spcclResult_t result, spcclComm_t comm, const char* mentions, bool* ok) {
  std::string message = spcclGetLastError(comm);
  *ok &= report(result == spcclInvalidArgument && message.find(mentions) != std::string::npos, 0,
                std::string("expected an error naming '") + mentions + "', got: " + message);
}

TEST(MigrateCollectives, BadArgumentsNameTheArgument) {
  onRanks(2, [](spcclComm_t comm, int) {
    bool ok = true;
    float x[8] = {};
    size_t begin = 0, length = 0;
    expectInvalid(spcclMigrateBroadcast(x, 8, spcclFloat32, 2, comm, nullptr), comm, "straggler 2",
                  &ok);
    expectInvalid(spcclMigrateBroadcast(x, 8, spcclFloat32, -1, comm, nullptr), comm,
                  "straggler -1", &ok);
    expectInvalid(spcclMigrateBroadcast(nullptr, 8, spcclFloat32, 0, comm, nullptr), comm, "buff",
                  &ok);
    expectInvalid(spcclMigrateBroadcast(x, 8, static_cast<spcclDataType_t>(17), 0, comm, nullptr),
                  comm, "datatype 17", &ok);
    expectInvalid(spcclMigrateBroadcast(x, 8, spcclFloat32, 0, nullptr, nullptr), nullptr,
                  "comm is NULL", &ok);
    expectInvalid(spcclMigrateSlice(comm, 5, 10, &begin, &length), comm, "straggler 5", &ok);
    expectInvalid(spcclMigrateSlice(comm, 0, 10, nullptr, &length), comm, "begin", &ok);
    expectInvalid(spcclMigrateReduce(x, x, 8, spcclFloat32, spcclSum, 9, comm, nullptr), comm,
                  "dest 9", &ok);
    expectInvalid(
        spcclMigrateReduce(x, x, 8, spcclFloat32, static_cast<spcclRedOp_t>(7), 0, comm, nullptr),
        comm, "op 7", &ok);
    expectInvalid(spcclMigrateAllReduce(x, x, 8, x, 4, 5, spcclFloat32, spcclSum, comm, nullptr),
                  comm, "migratedOffset 5 + migratedCount 4 exceeds count 8", &ok);
    expectInvalid(
        spcclMigrateAllReduce(x, x, 8, nullptr, 4, 0, spcclFloat32, spcclSum, comm, nullptr), comm,
        "migrated is NULL", &ok);
    expectInvalid(spcclScatter(x, x, 4, spcclFloat32, 3, comm, nullptr), comm, "root 3", &ok);
    expectInvalid(spcclGather(x, x, SIZE_MAX / 2, spcclFloat32, 0, comm, nullptr), comm,
                  "overflows", &ok);
    expectInvalid(spcclImigrateBroadcast(x, 8, spcclFloat32, 0, comm, nullptr), comm,
                  "spcclImigrateBroadcast: request is NULL", &ok);
    expectInvalid(spcclImigrateReduce(x, x, 8, spcclFloat32, spcclSum, 0, comm, nullptr), comm,
                  "spcclImigrateReduce: request is NULL", &ok);
    spcclRequest_t request = nullptr;
    expectInvalid(spcclImigrateReduce(x, x, 8, spcclFloat32, spcclSum, 9, comm, &request), comm,
                  "dest 9", &ok);
    expectInvalid(spcclImigrateAllReduce(x, x, 8, x, 4, 0, spcclFloat32, spcclSum, comm, nullptr),
                  comm, "spcclImigrateAllReduce: request is NULL", &ok);
    // Nothing was sent: the communicator still works.
    ok &= report(spcclMigrateBroadcast(x, 8, spcclFloat32, 1, comm, nullptr) == spcclSuccess, 0,
                 spcclGetLastError(comm));
    return ok;
  });
}

// Ranks that disagree on the straggler fail together in the root
// agreement (tests/faults/test_root_agreement.cc covers every rooted call);
// ranks that disagree on which call they make get the engine's
// signature-mismatch error. Neither hangs.
TEST(MigrateCollectives, MismatchedCallsFailWithInvalidUsage) {
  onRanks(3, [](spcclComm_t comm, int rank) {
    float x[64] = {};
    spcclResult_t res =
        spcclMigrateBroadcast(x, 64, spcclFloat32, rank == 2 ? 1 : 0, comm, nullptr);
    const std::string error = spcclGetLastError(comm);
    return report(res == spcclInvalidUsage && error.find("straggler mismatch") != std::string::npos,
                  rank, "expected a straggler mismatch, got: " + error);
  });
  onRanks(2, [](spcclComm_t comm, int rank) {
    float x[64] = {};
    // Rank 0's reduce towards rank 1 sends what rank 1's broadcast from
    // rank 0 receives: the kinds differ.
    spcclResult_t res = rank == 0
                            ? spcclMigrateReduce(x, x, 64, spcclFloat32, spcclSum, 1, comm, nullptr)
                            : spcclMigrateBroadcast(x, 64, spcclFloat32, 0, comm, nullptr);
    if (rank == 0) return true;
    // The message names both calls' kinds (broadcast 1, reduce 2) and op.
    const std::string error = spcclGetLastError(comm);
    return report(res == spcclInvalidUsage && error.find("kind=1") != std::string::npos &&
                      error.find("kind=2") != std::string::npos &&
                      error.find("invalid-op") == std::string::npos,
                  rank, "expected a mismatch naming both kinds, got: " + error);
  });
}

}  // namespace
