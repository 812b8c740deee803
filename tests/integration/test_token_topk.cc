// Token top-k and token mask all-reduces with real processes (forked
// ranks; docs/compressed.md "Token-level top-k"): every rank returns the
// reference mask (scores summed, ties by lower token index); kept rows
// match the exact sum (dense path, up to rounding) or stay within the
// compressed bound computed over the packed rows; pruned rows follow the
// policy; the mask call moves only the kept rows (byte counters, and the
// same bits as an all-reduce of the packed rows); error feedback works on
// the kept rows; non-blocking forms equal the blocking ones; bad input
// names the argument; ranks that disagree fail together, quickly.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "../common/fork_ranks.h"
#include "spccl.h"
#include "test_compressed_support.h"

using namespace spccl::testing;

namespace {

// bits 0: cfg NULL (the kept rows are all-reduced exactly).
struct TokenCase {
  int bits = 0;
  spcclCodec_t codec = spcclCodecPiecewise;
  spcclCompressSchedule_t schedule = spcclCompressTwoShot;
  size_t block = 256;
  spcclDataType_t type = spcclFloat32;
  spcclRedOp_t op = spcclSum;
  spcclPrunePolicy_t policy = spcclPruneZero;
  size_t tokens = 0, hidden = 0, keep = 0;

  size_t count() const { return tokens * hidden; }
  size_t rowBytes() const { return hidden * spcclTypeSize(type); }
  std::string describe() const {
    char text[200];
    std::snprintf(text, sizeof(text), "%s %s %s, %s, tokens %zu hidden %zu keep %zu, %s",
                  bits == 0                   ? "dense"
                  : codec == spcclCodecLinear ? "linear"
                                              : "piecewise",
                  bits == 0 ? ""
                            : (std::to_string(bits) + "-bit block " + std::to_string(block) +
                               (schedule == spcclCompressRing ? " ring" : " two-shot"))
                                  .c_str(),
                  spcclTypeName(type), spcclOpName(op), tokens, hidden, keep,
                  policy == spcclPruneZero ? "prune zero" : "prune keep-local");
    return text;
  }
  spcclCompression cfg() const {
    spcclCompression c = SPCCL_COMPRESSION_INITIALIZER;
    c.bits = bits;
    c.codec = codec;
    c.schedule = schedule;
    c.blockSize = block;
    return c;
  }
};

// scoreOf, scoresOf, referenceMask: test_compressed_support.h.

std::vector<size_t> keptRows(const std::vector<unsigned char>& mask) {
  std::vector<size_t> rows;
  for (size_t t = 0; t < mask.size(); ++t)
    if (mask[t]) rows.push_back(t);
  return rows;
}

// Relative rounding of the type, for the exact (dense) path and outputs.
double typeEpsilon(spcclDataType_t type) {
  return type == spcclFloat16 ? 1.0 / 1024 : type == spcclBfloat16 ? 1.0 / 128 : 1e-6;
}

// Kept rows against the exact sum: within the compressed bound over the
// packed tensor (blocks run across rows), or rounding for the dense path.
// Pruned rows: zero bytes, or this rank's input bytes.
bool checkRows(const TokenCase& c, int rank, int n, const std::vector<TypedBuffer>& inputs,
               const TypedBuffer& out, const std::vector<unsigned char>& mask) {
  const std::vector<size_t> rows = keptRows(mask);
  const size_t packed = rows.size() * c.hidden;
  auto at = [&](size_t j) { return rows[j / c.hidden] * c.hidden + j % c.hidden; };
  const double divisor = c.op == spcclAvg ? n : 1;
  const double h = c.bits ? halfStep(c.codec, c.bits) : 0;
  for (size_t b = 0; b * c.block < packed; ++b) {
    const size_t end = std::min(packed, (b + 1) * c.block);
    double a = 0;  // A_b over the packed block
    for (int r = 0; r < n; ++r) {
      double m = 0;
      for (size_t j = b * c.block; j < end; ++j)
        m = std::max(m, std::fabs(double(inputs[r].values[at(j)])));
      a += m;
    }
    for (size_t j = b * c.block; j < end; ++j) {
      double exact = 0, magnitude = 0;
      for (int r = 0; r < n; ++r) {
        exact += inputs[r].values[at(j)];
        magnitude += std::fabs(inputs[r].values[at(j)]);
      }
      exact /= divisor;
      const double got = out.get(at(j));
      double bound = typeEpsilon(c.type) * (n * magnitude + std::fabs(got)) + 1e-30;
      if (c.bits)
        bound +=
            (c.schedule == spcclCompressTwoShot ? h * a * (2 + h) : a * (std::pow(1 + h, n) - 1)) /
                divisor +
            1e-5 * a * n;
      if (!(std::fabs(got - exact) <= bound)) {
        std::fprintf(stderr,
                     "rank %d: %s: row %zu col %zu is %.9g, exact %.9g, error %.3g > %.3g\n", rank,
                     c.describe().c_str(), at(j) / c.hidden, at(j) % c.hidden, got, exact,
                     std::fabs(got - exact), bound);
        return false;
      }
    }
  }
  const std::vector<unsigned char> zeros(c.rowBytes(), 0);
  for (size_t t = 0; t < c.tokens; ++t) {
    if (mask[t]) continue;
    const unsigned char* row = out.bytes.data() + t * c.rowBytes();
    const unsigned char* want =
        c.policy == spcclPruneZero ? zeros.data() : inputs[rank].bytes.data() + t * c.rowBytes();
    if (std::memcmp(row, want, c.rowBytes()) != 0) {
      std::fprintf(stderr, "rank %d: %s: pruned row %zu does not follow the policy\n", rank,
                   c.describe().c_str(), t);
      return false;
    }
  }
  return true;
}

// The same bits on every rank: a hash of the mask and of the kept rows.
bool sameOnEveryRank(spcclComm_t comm, int rank, int n, const TokenCase& c, const TypedBuffer& out,
                     const std::vector<unsigned char>& mask) {
  uint64_t mine = fnv(mask.data(), mask.size());
  for (size_t t : keptRows(mask))
    mine ^= fnv(out.bytes.data() + t * c.rowBytes(), c.rowBytes()) * (t + 1);
  std::vector<uint64_t> all(n);
  if (spcclAllGather(&mine, all.data(), 1, spcclUint64, comm, nullptr) != spcclSuccess)
    return false;
  for (int r = 0; r < n; ++r)
    if (all[r] != mine) {
      std::fprintf(stderr, "rank %d: %s: rank %d's mask or kept rows differ\n", rank,
                   c.describe().c_str(), r);
      return false;
    }
  return true;
}

bool runTopkCase(spcclComm_t comm, int rank, int n, const TokenCase& c, uint64_t salt) {
  std::vector<TypedBuffer> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(inputOf(r, c.type, c.count(), salt));
  TypedBuffer out = inputs[rank];
  const std::vector<float> scores = scoresOf(rank, c.tokens);
  std::vector<unsigned char> mask(c.tokens, 0xAA);
  const spcclCompression cfg = c.cfg();
  if (spcclTokenTopkAllReduce(out.bytes.data(), scores.data(), c.tokens, c.hidden, c.type, c.op,
                              c.keep, c.bits ? &cfg : nullptr, c.policy, mask.data(), comm,
                              nullptr) != spcclSuccess) {
    std::fprintf(stderr, "rank %d: %s failed: %s\n", rank, c.describe().c_str(),
                 spcclGetLastError(comm));
    return false;
  }
  if (mask != referenceMask(n, c.tokens, c.keep)) {
    std::fprintf(stderr, "rank %d: %s: the mask is not the reference top-k\n", rank,
                 c.describe().c_str());
    return false;
  }
  return checkRows(c, rank, n, inputs, out, mask) && sameOnEveryRank(comm, rank, n, c, out, mask);
}

void runTopkMatrix(int n) {
  expectAllExitedOk(forkRanks(
      n,
      [n](int rank, const spcclUniqueId& id) {
        spcclComm_t comm = initOrExit(n, id, rank, 30000);
        std::vector<TokenCase> configs(5);
        configs[1].bits = 4;  // piecewise two-shot, blocks across rows
        configs[1].block = 7;
        configs[2].bits = 4;
        configs[2].schedule = spcclCompressRing;
        configs[3].bits = 8;
        configs[3].codec = spcclCodecLinear;
        configs[3].block = 1;
        configs[4].bits = 2;
        uint64_t salt = 0;
        for (const TokenCase& base : configs)
          for (spcclDataType_t type : {spcclFloat32, spcclFloat16, spcclBfloat16})
            for (spcclRedOp_t op : {spcclSum, spcclAvg})
              for (int shape = 0; shape < 5; ++shape) {
                TokenCase c = base;
                c.type = type;
                c.op = op;
                c.policy = salt % 2 ? spcclPruneKeepLocal : spcclPruneZero;
                c.tokens = shape == 4 ? (salt % 3 == 0 ? 0 : 1) : 37;
                c.hidden = salt % 4 == 3 ? 1 : 19;
                const size_t keeps[] = {0, 1, c.tokens / 2, c.tokens,
                                        c.tokens};  // keep = 0 and keep = all
                c.keep = keeps[shape];
                if (!runTopkCase(comm, rank, n, c, salt++)) return kChildWrongResult;
              }
        spcclCommDestroy(comm);
        return kChildOk;
      },
      240));
}

TEST(TokenTopk, MatchesReferenceOneRank) { runTopkMatrix(1); }
TEST(TokenTopk, MatchesReferenceTwoRanks) { runTopkMatrix(2); }
TEST(TokenTopk, MatchesReferenceThreeRanks) { runTopkMatrix(3); }
TEST(TokenTopk, MatchesReferenceFiveRanks) { runTopkMatrix(5); }

// Every token has the same score: the first keep tokens win; NaN scores
// (one rank's NaN makes the sum NaN) rank below every number.
TEST(TokenTopk, TiesByLowerIndexAndNaNLast) {
  const int n = 3;
  expectAllExitedOk(forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 30000);
    const size_t tokens = 20, hidden = 4;
    std::vector<float> buff(tokens * hidden, 1.0f), scores(tokens, 0.5f);
    std::vector<unsigned char> mask(tokens);
    if (spcclTokenTopkAllReduce(buff.data(), scores.data(), tokens, hidden, spcclFloat32, spcclSum,
                                7, nullptr, spcclPruneZero, mask.data(), comm,
                                nullptr) != spcclSuccess)
      return kChildWrongResult;
    for (size_t t = 0; t < tokens; ++t)
      if (mask[t] != (t < 7)) return kChildWrongResult;
    if (rank == 1) scores[2] = std::nanf("");  // the sum of token 2 is NaN
    scores[5] = rank == 0 ? -0.0f : 0.0f;      // +0 and -0 are equal
    scores[9] = -0.0f;
    scores[15] = 0.2f;
    if (spcclTokenTopkAllReduce(buff.data(), scores.data(), tokens, hidden, spcclFloat32, spcclSum,
                                18, nullptr, spcclPruneZero, mask.data(), comm,
                                nullptr) != spcclSuccess)
      return kChildWrongResult;
    // 16 tokens at 1.5, then 15 (0.6), then 5 and 9 (0 and -0, equal) by
    // index: 5 kept, 9 and the NaN token 2 pruned.
    for (size_t t = 0; t < tokens; ++t)
      if (mask[t] != (t != 2 && t != 9)) {
        std::fprintf(stderr, "rank %d: token %zu mask %d\n", rank, t, mask[t]);
        return kChildWrongResult;
      }
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

uint64_t bytesSent(spcclComm_t comm) {
  spcclCounters_t c{};
  spcclCommGetCounters(comm, &c);
  return c.bytesSent;
}

// The mask call sends what an all-reduce of the packed kept rows sends
// (plus one small agreement header per peer) and produces the same bits;
// the top-k call adds the scores' all-gather. Dense and compressed.
void runTrafficCheck(int n) {
  expectAllExitedOk(forkRanks(n, [n](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 30000);
    const size_t tokens = 64, hidden = 300, keep = 20, rowBytes = hidden * 4;
    const uint64_t headerSlack = 128 * static_cast<uint64_t>(n - 1);
    const TypedBuffer input = inputOf(rank, spcclFloat32, tokens * hidden, 3);
    const std::vector<float> scores = scoresOf(rank, tokens);
    const spcclCompression compressed = SPCCL_COMPRESSION_INITIALIZER;
    for (const spcclCompression* cfg :
         {static_cast<const spcclCompression*>(nullptr), &compressed}) {
      const char* what = cfg ? "compressed" : "dense";
      std::vector<unsigned char> buff = input.bytes, mask(tokens);
      uint64_t before = bytesSent(comm);
      if (spcclTokenTopkAllReduce(buff.data(), scores.data(), tokens, hidden, spcclFloat32,
                                  spcclSum, keep, cfg, spcclPruneZero, mask.data(), comm,
                                  nullptr) != spcclSuccess)
        return kChildWrongResult;
      const uint64_t topkBytes = bytesSent(comm) - before;
      const std::vector<size_t> rows = keptRows(mask);
      if (rows.size() != keep) return kChildWrongResult;

      buff = input.bytes;
      before = bytesSent(comm);
      if (spcclTokenMaskAllReduce(buff.data(), mask.data(), tokens, hidden, spcclFloat32, spcclSum,
                                  cfg, spcclPruneKeepLocal, comm, nullptr) != spcclSuccess)
        return kChildWrongResult;
      const uint64_t maskBytes = bytesSent(comm) - before;

      std::vector<unsigned char> packed(keep * rowBytes);
      for (size_t i = 0; i < keep; ++i)
        std::memcpy(packed.data() + i * rowBytes, input.bytes.data() + rows[i] * rowBytes,
                    rowBytes);
      before = bytesSent(comm);
      const spcclResult_t res =
          cfg ? spcclCompressedAllReduce(packed.data(), packed.data(), keep * hidden, spcclFloat32,
                                         spcclSum, cfg, comm, nullptr)
              : spcclAllReduce(packed.data(), packed.data(), keep * hidden, spcclFloat32, spcclSum,
                               comm, nullptr);
      if (res != spcclSuccess) return kChildWrongResult;
      const uint64_t packedBytes = bytesSent(comm) - before;

      before = bytesSent(comm);
      std::vector<unsigned char> full = input.bytes;
      if (spcclAllReduce(full.data(), full.data(), tokens * hidden, spcclFloat32, spcclSum, comm,
                         nullptr) != spcclSuccess)
        return kChildWrongResult;
      const uint64_t fullBytes = bytesSent(comm) - before;

      const uint64_t scoreBytes = static_cast<uint64_t>(n - 1) * tokens * 4;
      std::fprintf(stderr,
                   "rank %d %s: top-k %llu, mask %llu, packed rows %llu, full dense %llu bytes\n",
                   rank, what, (unsigned long long)topkBytes, (unsigned long long)maskBytes,
                   (unsigned long long)packedBytes, (unsigned long long)fullBytes);
      if (maskBytes < packedBytes || maskBytes > packedBytes + headerSlack)
        return kChildWrongResult;
      if (topkBytes < maskBytes + scoreBytes || topkBytes > maskBytes + scoreBytes + headerSlack)
        return kChildWrongResult;
      if (n > 1 && maskBytes * tokens > fullBytes * keep * 11 / 10) return kChildWrongResult;
      for (size_t t = 0, i = 0; t < tokens; ++t) {
        const unsigned char* row = buff.data() + t * rowBytes;
        const unsigned char* want =
            mask[t] ? packed.data() + (i++) * rowBytes : input.bytes.data() + t * rowBytes;
        if (std::memcmp(row, want, rowBytes) != 0) {
          std::fprintf(stderr, "rank %d %s: row %zu differs from the packed all-reduce\n", rank,
                       what, t);
          return kChildWrongResult;
        }
      }
    }
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

TEST(TokenTopk, MaskCallMovesOnlyKeptRowsThreeRanks) { runTrafficCheck(3); }
TEST(TokenTopk, MaskCallMovesOnlyKeptRowsFourRanks) { runTrafficCheck(4); }

// A tensor of 8 MiB (the size from which the output rows and the zeroed
// pruned rows are streamed past the cache, schedule_parts.cc), pruned
// rows zeroed in the same pass: the kept rows are the packed compressed
// all-reduce's bits, every pruned row +0 (the first and the last ones, and
// between runs of adjacent kept rows).
TEST(TokenTopk, LargeTensorPrunedRowsZeroedKeptRowsAsPacked) {
  constexpr int n = 2;
  expectAllExitedOk(forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 60000);
    const size_t tokens = 2048, hidden = 1024, rowBytes = hidden * 4;
    const TypedBuffer input = inputOf(rank, spcclFloat32, tokens * hidden, 11);
    std::vector<unsigned char> mask(tokens);
    for (size_t t = 0; t < tokens; ++t)
      mask[t] = t != 0 && t + 1 != tokens && (t % 5 < 2 || t % 7 == 3);
    const std::vector<size_t> rows = keptRows(mask);
    const spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    std::vector<unsigned char> buff = input.bytes;
    if (spcclTokenMaskAllReduce(buff.data(), mask.data(), tokens, hidden, spcclFloat32, spcclSum,
                                &cfg, spcclPruneZero, comm, nullptr) != spcclSuccess)
      return kChildWrongResult;
    std::vector<unsigned char> packed(rows.size() * rowBytes);
    for (size_t i = 0; i < rows.size(); ++i)
      std::memcpy(packed.data() + i * rowBytes, input.bytes.data() + rows[i] * rowBytes, rowBytes);
    if (spcclCompressedAllReduce(packed.data(), packed.data(), rows.size() * hidden, spcclFloat32,
                                 spcclSum, &cfg, comm, nullptr) != spcclSuccess)
      return kChildWrongResult;
    const std::vector<unsigned char> zeros(rowBytes, 0);
    for (size_t t = 0, i = 0; t < tokens; ++t) {
      const unsigned char* want = mask[t] ? packed.data() + (i++) * rowBytes : zeros.data();
      if (std::memcmp(buff.data() + t * rowBytes, want, rowBytes) != 0) {
        std::fprintf(stderr, "rank %d: row %zu (%s) is not what it should be\n", rank, t,
                     mask[t] ? "kept" : "pruned");
        return kChildWrongResult;
      }
    }
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

// Error feedback on the kept rows: over T mask calls, the kept rows'
// outputs sum to T*S minus the ranks' residuals (docs/compressed.md);
// pruned rows' residuals stay untouched.
TEST(TokenTopk, ErrorFeedbackOnKeptRows) {
  const int n = 3;
  expectAllExitedOk(forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 30000);
    const size_t tokens = 16, hidden = 50, count = tokens * hidden;
    std::vector<TypedBuffer> inputs;
    for (int r = 0; r < n; ++r) inputs.push_back(inputOf(r, spcclFloat32, count, 11));
    std::vector<float> residual(count, 0.0f), out(count), total(count, 0.0f);
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    cfg.bits = 3;
    cfg.blockSize = 32;
    cfg.residual = residual.data();
    const std::vector<float> scores = scoresOf(rank, tokens);
    std::vector<unsigned char> mask(tokens);
    const int calls = 12;
    for (int t = 0; t < calls; ++t) {
      std::memcpy(out.data(), inputs[rank].bytes.data(), count * 4);
      const spcclResult_t res =
          t == 0 ? spcclTokenTopkAllReduce(out.data(), scores.data(), tokens, hidden, spcclFloat32,
                                           spcclSum, 6, &cfg, spcclPruneZero, mask.data(), comm,
                                           nullptr)
                 : spcclTokenMaskAllReduce(out.data(), mask.data(), tokens, hidden, spcclFloat32,
                                           spcclSum, &cfg, spcclPruneZero, comm, nullptr);
      if (res != spcclSuccess) return kChildWrongResult;
      for (size_t i = 0; i < count; ++i) total[i] += out[i];
    }
    std::vector<float> residuals(count * n);
    if (spcclAllGather(residual.data(), residuals.data(), count, spcclFloat32, comm, nullptr) !=
        spcclSuccess)
      return kChildWrongResult;
    for (size_t i = 0; i < count; ++i) {
      double exact = 0, left = 0;
      for (int r = 0; r < n; ++r) {
        exact += inputs[r].values[i];
        left += residuals[r * count + i];
      }
      if (!mask[i / hidden]) {
        if (residual[i] != 0.0f || total[i] != 0.0f) return kChildWrongResult;
        continue;
      }
      if (std::fabs(total[i] - calls * exact + left) > 1e-3 * calls) {
        std::fprintf(stderr,
                     "rank %d: element %zu: outputs sum to %.6g, T*S = %.6g, residuals %.6g\n",
                     rank, i, total[i], calls * exact, left);
        return kChildWrongResult;
      }
    }
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

bool waitWithDeadline(spcclRequest_t request) {
  int done = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done && std::chrono::steady_clock::now() < deadline)
    if (spcclTest(request, &done) != spcclSuccess) return false;
  return done;
}

TEST(TokenTopk, NonBlockingEqualsBlocking) {
  const int n = 3;
  expectAllExitedOk(forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 30000);
    const size_t tokens = 40, hidden = 33;
    const TypedBuffer input = inputOf(rank, spcclBfloat16, tokens * hidden, 4);
    const std::vector<float> scores = scoresOf(rank, tokens);
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    std::vector<unsigned char> blocking = input.bytes, async = input.bytes, maskA(tokens),
                               maskB(tokens);
    if (spcclTokenTopkAllReduce(blocking.data(), scores.data(), tokens, hidden, spcclBfloat16,
                                spcclAvg, 13, &cfg, spcclPruneZero, maskA.data(), comm,
                                nullptr) != spcclSuccess)
      return kChildWrongResult;
    spcclRequest_t topk = nullptr, masked = nullptr;
    if (spcclItokenTopkAllReduce(async.data(), scores.data(), tokens, hidden, spcclBfloat16,
                                 spcclAvg, 13, &cfg, spcclPruneZero, maskB.data(), comm,
                                 &topk) != spcclSuccess)
      return kChildWrongResult;
    cfg.bits = 8;  // copied at submission
    if (!waitWithDeadline(topk) || maskA != maskB || blocking != async) return kChildWrongResult;
    std::vector<unsigned char> blockingMask = input.bytes, asyncMask = input.bytes;
    if (spcclTokenMaskAllReduce(blockingMask.data(), maskA.data(), tokens, hidden, spcclBfloat16,
                                spcclSum, &cfg, spcclPruneKeepLocal, comm, nullptr) != spcclSuccess)
      return kChildWrongResult;
    if (spcclItokenMaskAllReduce(asyncMask.data(), maskA.data(), tokens, hidden, spcclBfloat16,
                                 spcclSum, &cfg, spcclPruneKeepLocal, comm,
                                 &masked) != spcclSuccess ||
        spcclWait(masked) != spcclSuccess || blockingMask != asyncMask)
      return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

TEST(TokenTopk, BadArgumentsNameTheArgument) {
  expectAllExitedOk(forkRanks(1, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(1, id, rank, 30000);
    float x[12] = {}, scores[4] = {1, 2, 3, 4};
    unsigned char mask[4] = {1, 0, 1, 0};
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    auto topk = [&](size_t keep, const float* s = nullptr, spcclDataType_t type = spcclFloat32,
                    spcclRedOp_t op = spcclSum, const spcclCompression* c = nullptr,
                    spcclPrunePolicy_t policy = spcclPruneZero, void* buff = nullptr,
                    void* stream = nullptr) {
      return spcclTokenTopkAllReduce(buff ? buff : x, s ? s : scores, 4, 3, type, op, keep, c,
                                     policy, nullptr, comm, stream);
    };
    bool ok = failsNaming(topk(5), comm, "keep 5 exceeds tokens 4");
    ok = ok && failsNaming(spcclTokenTopkAllReduce(x, nullptr, 4, 3, spcclFloat32, spcclSum, 2,
                                                   nullptr, spcclPruneZero, nullptr, comm, nullptr),
                           comm, "scores is NULL");
    for (int bits : {0, 1, 9}) {
      cfg.bits = bits;
      ok = ok && failsNaming(topk(2, nullptr, spcclFloat32, spcclSum, &cfg), comm, "cfg->bits");
      ok = ok && failsNaming(spcclTokenMaskAllReduce(x, mask, 4, 3, spcclFloat32, spcclSum, &cfg,
                                                     spcclPruneZero, comm, nullptr),
                             comm, "cfg->bits");
    }
    ok = ok && failsNaming(topk(2, nullptr, spcclInt32), comm, "datatype int32");
    ok = ok && failsNaming(topk(2, nullptr, spcclFloat64), comm, "datatype double");
    ok = ok && failsNaming(topk(2, nullptr, spcclFloat32, spcclMax), comm, "op max");
    ok = ok && failsNaming(topk(2, nullptr, spcclFloat32, spcclSum, nullptr,
                                static_cast<spcclPrunePolicy_t>(2)),
                           comm, "prunePolicy");
    ok = ok && failsNaming(spcclTokenTopkAllReduce(nullptr, scores, 4, 3, spcclFloat32, spcclSum, 2,
                                                   nullptr, spcclPruneZero, nullptr, comm, nullptr),
                           comm, "buff is NULL");
    int stream = 0;
    ok = ok && failsNaming(topk(2, nullptr, spcclFloat32, spcclSum, nullptr, spcclPruneZero,
                                nullptr, &stream),
                           comm, "stream");
    ok = ok && failsNaming(spcclTokenMaskAllReduce(x, nullptr, 4, 3, spcclFloat32, spcclSum,
                                                   nullptr, spcclPruneZero, comm, nullptr),
                           comm, "mask is NULL");
    ok =
        ok && failsNaming(spcclItokenTopkAllReduce(x, scores, 4, 3, spcclFloat32, spcclSum, 2,
                                                   nullptr, spcclPruneZero, nullptr, comm, nullptr),
                          comm, "request is NULL");
    ok = ok && failsNaming(spcclItokenMaskAllReduce(x, mask, 4, 3, spcclFloat32, spcclSum, nullptr,
                                                    spcclPruneZero, comm, nullptr),
                           comm, "request is NULL");
    ok = ok &&
         failsNaming(spcclTokenTopkAllReduce(x, scores, 4, 3, spcclFloat32, spcclSum, 2, nullptr,
                                             spcclPruneZero, nullptr, nullptr, nullptr),
                     nullptr, "comm is NULL");
    ok = ok &&
         failsNaming(spcclTokenTopkAllReduce(x, scores, SIZE_MAX / 2, 3, spcclFloat32, spcclSum, 2,
                                             nullptr, spcclPruneZero, nullptr, comm, nullptr),
                     comm, "overflows");
    // Zero tokens and no scores are fine.
    ok = ok && spcclTokenTopkAllReduce(nullptr, nullptr, 0, 3, spcclFloat32, spcclSum, 0, nullptr,
                                       spcclPruneZero, nullptr, comm, nullptr) == spcclSuccess;
    spcclCommDestroy(comm);
    return ok ? kChildOk : kChildWrongResult;
  }));
}

// One rank differs (cfg, cfg NULL vs given, keep, the mask): every rank
// fails with invalid usage within seconds, and the communicator still works.
TEST(TokenTopk, DisagreementFailsEveryRank) {
  const int n = 3;
  expectAllExitedOk(forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 30000);
    const size_t tokens = 10, hidden = 8;
    std::vector<float> x(tokens * hidden, 1.0f);
    const std::vector<float> scores = scoresOf(rank, tokens);
    std::vector<unsigned char> mask(tokens, 1);
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER, otherBits = SPCCL_COMPRESSION_INITIALIZER;
    otherBits.bits = 5;
    auto expectDisagreement = [&](spcclResult_t result, const char* what) {
      if (result == spcclInvalidUsage &&
          std::string(spcclGetLastError(comm)).find("disagree") != std::string::npos)
        return true;
      std::fprintf(stderr, "rank %d: %s: %d %s\n", rank, what, result, spcclGetLastError(comm));
      return false;
    };
    const auto start = std::chrono::steady_clock::now();
    bool ok = expectDisagreement(
        spcclTokenTopkAllReduce(x.data(), scores.data(), tokens, hidden, spcclFloat32, spcclSum, 4,
                                rank == 1 ? &otherBits : &cfg, spcclPruneZero, nullptr, comm,
                                nullptr),
        "bits");
    ok = ok &&
         expectDisagreement(spcclTokenTopkAllReduce(
                                x.data(), scores.data(), tokens, hidden, spcclFloat32, spcclSum, 4,
                                rank == 0 ? nullptr : &cfg, spcclPruneZero, nullptr, comm, nullptr),
                            "cfg NULL");
    ok = ok &&
         expectDisagreement(spcclTokenTopkAllReduce(x.data(), scores.data(), tokens, hidden,
                                                    spcclFloat32, spcclSum, rank == 2 ? 5 : 4, &cfg,
                                                    spcclPruneZero, nullptr, comm, nullptr),
                            "keep");
    if (rank == 1) mask[3] = 0;
    ok = ok && expectDisagreement(
                   spcclTokenMaskAllReduce(x.data(), mask.data(), tokens, hidden, spcclFloat32,
                                           spcclSum, &cfg, spcclPruneZero, comm, nullptr),
                   "mask");
    mask[3] = 1;
    ok = ok && expectDisagreement(spcclTokenMaskAllReduce(
                                      x.data(), mask.data(), tokens, hidden, spcclFloat32, spcclSum,
                                      rank == 2 ? &otherBits : &cfg, spcclPruneZero, comm, nullptr),
                                  "mask call bits");
    if (!ok) return kChildWrongResult;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 10)
      return kChildTooSlow;
    if (spcclTokenTopkAllReduce(x.data(), scores.data(), tokens, hidden, spcclFloat32, spcclSum, 4,
                                &cfg, spcclPruneZero, nullptr, comm, nullptr) != spcclSuccess)
      return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

}  // namespace
