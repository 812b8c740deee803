// The compressed all-reduce with real processes (forked ranks): the error
// bound of docs/compressed.md holds element by element for both schedules,
// codecs, widths 2-8, f32/f16/bf16, sum and avg, block sizes 1, 7 and 256
// and counts that leave ranks without a chunk; every rank gets the same
// bits; error feedback telescopes; the non-blocking form equals the
// blocking one; the two-shot's owned chunk in pieces gives the same bits
// as in one; bad arguments name the argument; a cfg that differs between
// ranks fails on every rank, quickly.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../common/fork_ranks.h"
#include "spccl.h"
#include "test_compressed_support.h"

using namespace spccl::testing;

namespace {

struct Case {
  spcclCodec_t codec;
  int bits;
  size_t block;
  spcclCompressSchedule_t schedule;
  spcclDataType_t type;
  spcclRedOp_t op;
  size_t count;
};

std::string describe(const Case& c) {
  char text[160];
  std::snprintf(text, sizeof(text), "%s %d-bit block %zu %s %s %s count %zu",
                c.codec == spcclCodecPiecewise ? "piecewise" : "linear", c.bits, c.block,
                c.schedule == spcclCompressRing ? "ring" : "two-shot", spcclTypeName(c.type),
                spcclOpName(c.op), c.count);
  return text;
}

// Runs one case on this rank and checks the bound; returns false (with a
// message) on a violation or a failed call.
bool runCase(spcclComm_t comm, int rank, int nranks, const Case& c, uint64_t salt) {
  std::vector<TypedBuffer> inputs;
  for (int r = 0; r < nranks; ++r) inputs.push_back(inputOf(r, c.type, c.count, salt));
  TypedBuffer out(c.type, c.count);
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.codec = c.codec;
  cfg.bits = c.bits;
  cfg.blockSize = c.block;
  cfg.schedule = c.schedule;
  const bool inPlace = salt % 2 == 1;
  if (inPlace) out.bytes = inputs[rank].bytes;
  const void* send = inPlace ? out.bytes.data() : inputs[rank].bytes.data();
  if (spcclCompressedAllReduce(send, out.bytes.data(), c.count, c.type, c.op, &cfg, comm,
                               nullptr) != spcclSuccess) {
    std::fprintf(stderr, "rank %d: %s failed: %s\n", rank, describe(c).c_str(),
                 spcclGetLastError(comm));
    return false;
  }
  const std::string violation =
      compressedBoundViolation(inputs, out, c.codec, c.bits, c.block, c.schedule, c.op);
  if (!violation.empty()) {
    std::fprintf(stderr, "rank %d: %s: %s\n", rank, describe(c).c_str(), violation.c_str());
    return false;
  }
  // Every rank holds the same bits.
  uint64_t mine = fnv(out.bytes.data(), out.bytes.size());
  std::vector<uint64_t> all(nranks);
  if (spcclAllGather(&mine, all.data(), 1, spcclUint64, comm, nullptr) != spcclSuccess)
    return false;
  for (int r = 0; r < nranks; ++r)
    if (all[r] != mine) {
      std::fprintf(stderr, "rank %d: %s: rank %d's output differs\n", rank, describe(c).c_str(), r);
      return false;
    }
  return true;
}

void runMatrix(int nranks, bool quick) {
  expectAllExitedOk(forkRanks(
      nranks,
      [nranks, quick](int rank, const spcclUniqueId& id) {
        spcclComm_t comm = initOrExit(nranks, id, rank, 30000);
        uint64_t salt = 0;
        const std::vector<int> widths =
            quick ? std::vector<int>{2, 4, 8} : std::vector<int>{2, 3, 4, 5, 6, 7, 8};
        for (spcclCompressSchedule_t schedule : {spcclCompressTwoShot, spcclCompressRing})
          for (spcclCodec_t codec : {spcclCodecPiecewise, spcclCodecLinear})
            for (int bits : widths)
              for (spcclDataType_t type : {spcclFloat32, spcclFloat16, spcclBfloat16})
                for (spcclRedOp_t op : {spcclSum, spcclAvg}) {
                  const size_t block = std::vector<size_t>{1, 7, 256}[salt % 3];
                  const size_t count = std::vector<size_t>{0, 1, 5, 1000, 4099}[salt % 5];
                  if (!runCase(comm, rank, nranks,
                               Case{codec, bits, block, schedule, type, op, count}, salt++))
                    return kChildWrongResult;
                }
        spcclCommDestroy(comm);
        return kChildOk;
      },
      240));
}

TEST(CompressedAllReduce, ErrorBoundOneRank) { runMatrix(1, false); }
TEST(CompressedAllReduce, ErrorBoundTwoRanks) { runMatrix(2, false); }
TEST(CompressedAllReduce, ErrorBoundThreeRanks) { runMatrix(3, false); }
TEST(CompressedAllReduce, ErrorBoundFiveRanks) { runMatrix(5, true); }

// The two-shot's owned chunk summed and sent in pieces
// (SPCCL_COMPRESS_PIECE_BYTES at its smallest, 4096 B: 1024 f32, rounded
// up to whole blocks) gives the bits of the chunk in one piece: output
// and error-feedback residual, on every rank. Counts leave a short last
// piece; blocks of 7 and 3-bit codes make pieces that end mid-word if cut
// wrong; in place and out of place; n = 3 and 8.
void expectPiecesChangeNoBit(int n) {
  expectAllExitedOk(forkRanks(
      n,
      [n](int rank, const spcclUniqueId& id) {
        setenv("SPCCL_COMPRESS_PIECE_BYTES", "4096", 1);
        spcclComm_t pieced = initOrExit(n, id, rank, 30000), whole = nullptr;
        setenv("SPCCL_COMPRESS_PIECE_BYTES", "0", 1);
        if (spcclCommSplit(pieced, 0, rank, &whole, nullptr) != spcclSuccess)
          return kChildInitFailed;
        uint64_t salt = 0;
        for (spcclCodec_t codec : {spcclCodecPiecewise, spcclCodecLinear})
          for (size_t block : {size_t{256}, size_t{7}})
            for (spcclRedOp_t op : {spcclSum, spcclAvg})
              for (bool inPlace : {false, true}) {
                const int bits = codec == spcclCodecPiecewise ? 4 : 3;
                const size_t count = n * 2600 + 13 + salt;
                const TypedBuffer in = inputOf(rank, spcclFloat32, count, 40 + salt++);
                std::vector<float> outs[2], residuals[2];
                spcclComm_t comms[2] = {pieced, whole};
                for (int k = 0; k < 2; ++k) {
                  outs[k].resize(count);
                  residuals[k].assign(count, 0.25f);
                  if (inPlace) std::memcpy(outs[k].data(), in.bytes.data(), count * 4);
                  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
                  cfg.codec = codec;
                  cfg.bits = bits;
                  cfg.blockSize = block;
                  cfg.residual = residuals[k].data();
                  const void* send =
                      inPlace ? static_cast<const void*>(outs[k].data()) : in.bytes.data();
                  if (spcclCompressedAllReduce(send, outs[k].data(), count, spcclFloat32, op, &cfg,
                                               comms[k], nullptr) != spcclSuccess) {
                    std::fprintf(stderr, "rank %d: %s\n", rank, spcclGetLastError(comms[k]));
                    return kChildWrongResult;
                  }
                }
                for (size_t i = 0; i < count; ++i)
                  if (std::memcmp(&outs[0][i], &outs[1][i], 4) != 0 ||
                      std::memcmp(&residuals[0][i], &residuals[1][i], 4) != 0) {
                    std::fprintf(stderr,
                                 "rank %d: count %zu block %zu bits %d %s: element %zu: pieced "
                                 "%.9g (residual %.9g), whole %.9g (residual %.9g)\n",
                                 rank, count, block, bits, inPlace ? "in place" : "out of place", i,
                                 outs[0][i], residuals[0][i], outs[1][i], residuals[1][i]);
                    return kChildWrongResult;
                  }
              }
        spcclCommDestroy(whole);
        spcclCommDestroy(pieced);
        return kChildOk;
      },
      240));
}

TEST(CompressedAllReduce, PiecesChangeNoBitThreeRanks) { expectPiecesChangeNoBit(3); }
TEST(CompressedAllReduce, PiecesChangeNoBitEightRanks) { expectPiecesChangeNoBit(8); }

// Sum over T calls of the outputs = T * S - sum over ranks of the final
// residuals (docs/compressed.md), up to f32 rounding.
TEST(CompressedAllReduce, ErrorFeedbackTelescopes) {
  const int n = 3;
  expectAllExitedOk(forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 30000);
    const size_t count = 777;
    for (spcclCompressSchedule_t schedule : {spcclCompressTwoShot, spcclCompressRing}) {
      std::vector<TypedBuffer> inputs;
      for (int r = 0; r < n; ++r) inputs.push_back(inputOf(r, spcclFloat32, count, 5));
      std::vector<float> residual(count, 0.0f), out(count);
      std::vector<double> total(count, 0.0);
      spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
      cfg.bits = 3;
      cfg.blockSize = 64;
      cfg.schedule = schedule;
      cfg.residual = residual.data();
      const int calls = 20;
      for (int t = 0; t < calls; ++t) {
        if (spcclCompressedAllReduce(inputs[rank].bytes.data(), out.data(), count, spcclFloat32,
                                     spcclSum, &cfg, comm, nullptr) != spcclSuccess)
          return kChildWrongResult;
        for (size_t i = 0; i < count; ++i) total[i] += out[i];
      }
      std::vector<float> residuals(count * n);
      if (spcclAllGather(residual.data(), residuals.data(), count, spcclFloat32, comm, nullptr) !=
          spcclSuccess)
        return kChildWrongResult;
      double worstWithout = 0;
      for (size_t i = 0; i < count; ++i) {
        double exact = 0, left = 0;
        for (int r = 0; r < n; ++r) {
          exact += inputs[r].values[i];
          left += residuals[r * count + i];
        }
        const double drift = total[i] - calls * exact;
        worstWithout = std::max(worstWithout, std::fabs(drift));
        if (std::fabs(drift + left) > 1e-3 * calls) {
          std::fprintf(stderr,
                       "rank %d: element %zu: outputs sum to %.6g, T*S = %.6g, residuals %.6g\n",
                       rank, i, total[i], calls * exact, left);
          return kChildWrongResult;
        }
      }
    }
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

TEST(CompressedAllReduce, NonBlockingEqualsBlocking) {
  const int n = 3;
  expectAllExitedOk(forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 30000);
    const size_t count = 10000;
    TypedBuffer in = inputOf(rank, spcclFloat32, count, 9);
    std::vector<float> blocking(count), a(count), b(count);
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    if (spcclCompressedAllReduce(in.bytes.data(), blocking.data(), count, spcclFloat32, spcclSum,
                                 &cfg, comm, nullptr) != spcclSuccess)
      return kChildWrongResult;
    spcclRequest_t first = nullptr, second = nullptr;
    if (spcclIcompressedAllReduce(in.bytes.data(), a.data(), count, spcclFloat32, spcclSum, &cfg,
                                  comm, &first) != spcclSuccess)
      return kChildWrongResult;
    cfg.bits = 8;  // copied at submission: the first request keeps 4 bits
    if (spcclIcompressedAllReduce(in.bytes.data(), b.data(), count, spcclFloat32, spcclSum, &cfg,
                                  comm, &second) != spcclSuccess)
      return kChildWrongResult;
    int done = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done && std::chrono::steady_clock::now() < deadline)
      if (spcclTest(first, &done) != spcclSuccess) return kChildWrongResult;
    if (!done || spcclWait(second) != spcclSuccess) return kChildWrongResult;
    if (std::memcmp(a.data(), blocking.data(), count * 4) != 0) return kChildWrongResult;
    if (std::memcmp(b.data(), blocking.data(), count * 4) == 0) return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

TEST(CompressedAllReduce, BadArgumentsNameTheArgument) {
  expectAllExitedOk(forkRanks(1, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(1, id, rank, 30000);
    float x[4] = {1, 2, 3, 4}, y[4];
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    auto call = [&](const spcclCompression* c, spcclDataType_t type = spcclFloat32,
                    spcclRedOp_t op = spcclSum, void* recv = nullptr) {
      return spcclCompressedAllReduce(x, recv ? recv : y, 4, type, op, c, comm, nullptr);
    };
    bool ok = failsNaming(call(nullptr), comm, "cfg is NULL");
    for (int bits : {-1, 0, 1, 9, 32}) {
      cfg.bits = bits;
      ok = ok && failsNaming(call(&cfg), comm, "cfg->bits");
    }
    cfg = SPCCL_COMPRESSION_INITIALIZER;
    ok = ok && failsNaming(call(&cfg, spcclInt32), comm, "datatype int32");
    ok = ok && failsNaming(call(&cfg, spcclFloat64), comm, "datatype double");
    ok = ok && failsNaming(call(&cfg, static_cast<spcclDataType_t>(42)), comm, "datatype 42");
    ok = ok && failsNaming(call(&cfg, spcclFloat32, spcclMax), comm, "op max");
    cfg.codec = static_cast<spcclCodec_t>(7);
    ok = ok && failsNaming(call(&cfg), comm, "cfg->codec");
    cfg = SPCCL_COMPRESSION_INITIALIZER;
    cfg.schedule = static_cast<spcclCompressSchedule_t>(-3);
    ok = ok && failsNaming(call(&cfg), comm, "cfg->schedule");
    cfg = SPCCL_COMPRESSION_INITIALIZER;
    cfg.magic = 0;
    ok = ok && failsNaming(call(&cfg), comm, "cfg->magic");
    cfg = SPCCL_COMPRESSION_INITIALIZER;
    ok = ok && failsNaming(spcclCompressedAllReduce(nullptr, y, 4, spcclFloat32, spcclSum, &cfg,
                                                    comm, nullptr),
                           comm, "sendbuff");
    ok = ok && failsNaming(
                   spcclIcompressedAllReduce(x, y, 4, spcclFloat32, spcclSum, &cfg, comm, nullptr),
                   comm, "request");
    ok = ok && failsNaming(spcclCompressedAllReduce(x, y, 4, spcclFloat32, spcclSum, &cfg, nullptr,
                                                    nullptr),
                           nullptr, "comm is NULL");
    // An older, smaller struct: fields it does not reach keep their defaults.
    cfg.size = offsetof(spcclCompression, bits) + sizeof(int);
    cfg.bits = 8;
    cfg.blockSize = 1u << 30;  // beyond the caller's size: ignored
    ok = ok && spcclCompressedAllReduce(x, y, 4, spcclFloat32, spcclSum, &cfg, comm, nullptr) ==
                   spcclSuccess;
    spcclCommDestroy(comm);
    return ok ? kChildOk : kChildWrongResult;
  }));
}

// Rank 1 asks for another width: every rank fails with invalid usage,
// within seconds (the agreement round), not at the timeout.
TEST(CompressedAllReduce, ConfigurationMismatchFailsEveryRank) {
  const int n = 3;
  expectAllExitedOk(forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 30000);
    std::vector<float> x(100, 1.0f), y(100);
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    if (rank == 1) cfg.bits = 5;
    const auto start = std::chrono::steady_clock::now();
    spcclResult_t result = spcclCompressedAllReduce(x.data(), y.data(), 100, spcclFloat32, spcclSum,
                                                    &cfg, comm, nullptr);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (result == spcclSuccess) return kChildUnexpectedSuccess;
    if (result != spcclInvalidUsage ||
        std::string(spcclGetLastError(comm)).find("disagree") == std::string::npos) {
      std::fprintf(stderr, "rank %d: %d %s\n", rank, result, spcclGetLastError(comm));
      return kChildWrongResult;
    }
    if (seconds > 10) return kChildTooSlow;
    // The communicator still works afterwards.
    cfg.bits = 4;
    if (spcclCompressedAllReduce(x.data(), y.data(), 100, spcclFloat32, spcclSum, &cfg, comm,
                                 nullptr) != spcclSuccess)
      return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

}  // namespace
