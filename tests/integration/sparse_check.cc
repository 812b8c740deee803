// sparse_check: the sparse all-reduce against the dense spcclAllReduce of
// the same data, for every algorithm, encoding, partitioner, data type,
// density and overlap pattern (docs/algorithms.md 2: lossless, bitwise identical
// on every rank, reproducible).
//
// Launch one per rank: spcclrun -n N -- sparse_check [--quick | --bp-pieces].
// Values are small non-zero integers (|v| <= 3), so every partial sum is
// exact in every type (bf16 holds integers up to 256) and the correct
// result is unique whatever the reduction order: outputs are compared bit
// for bit with the dense reference. A last pass uses inexact floats and
// checks bitwise agreement across ranks (a hash all-gathered) and across
// two runs. Uses only the public API.
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/sparse_inputs.h"
#include "spccl.h"

namespace {

using namespace spccl::sparse_inputs;

// ---- deterministic data (tests/common/sparse_inputs.h) ----

void storeValue(spcclDataType_t type, void* base, size_t index, double value) {
  char* at = static_cast<char*>(base) + index * spcclTypeSize(type);
  switch (type) {
    case spcclInt32: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(at, &v, 4);
      break;
    }
    case spcclInt64: {
      int64_t v = static_cast<int64_t>(value);
      std::memcpy(at, &v, 8);
      break;
    }
    case spcclFloat32: {
      float v = static_cast<float>(value);
      std::memcpy(at, &v, 4);
      break;
    }
    case spcclFloat64:
      std::memcpy(at, &value, 8);
      break;
    case spcclFloat16: {  // exact for the small integers used here
      float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t half = static_cast<uint16_t>((bits >> 16) & 0x8000u);
      if ((bits & 0x7fffffffu) != 0)
        half |= static_cast<uint16_t>(((((bits >> 23) & 0xff) - 127 + 15) << 10) |
                                      ((bits >> 13) & 0x3ffu));
      std::memcpy(at, &half, 2);
      break;
    }
    case spcclBfloat16: {
      float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t v = static_cast<uint16_t>(bits >> 16);
      std::memcpy(at, &v, 2);
      break;
    }
    default:
      break;
  }
}

uint64_t fnv1a(const void* data, size_t bytes) {
  uint64_t hash = 1469598103934665603ull;
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

// ---- the checker ----

struct Case {
  spcclDataType_t type = spcclFloat32;
  size_t count = 20000;
  double density = 0.01;
  Overlap overlap = Overlap::Random;
  spcclRedOp_t op = spcclSum;
  spcclSparseAlgorithm_t algorithm = spcclSparseAuto;
  spcclSparseEncoding_t encoding = spcclEncodingAuto;
  spcclSparsePartitioner_t partitioner = spcclPartitionAuto;
  uint64_t tag = 0;
};

std::string describe(const Case& c) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "%s count=%zu d=%g %s %s algorithm=%d encoding=%d partitioner=%d tag=%" PRIu64,
                spcclTypeName(c.type), c.count, c.density, overlapName(c.overlap),
                spcclOpName(c.op), c.algorithm, c.encoding, c.partitioner, c.tag);
  return text;
}

class Checker {
 public:
  Checker(spcclComm_t comm, int rank, int nranks) : comm_(comm), rank_(rank), n_(nranks) {}
  int failures() const { return failures_; }
  int checks() const { return checks_; }

  // Dense in, dense out, against the dense all-reduce.
  void denseCase(const Case& c) {
    std::vector<unsigned char> input = makeInput(c), expected = reference(c, input);
    std::vector<unsigned char> output(input.size(), 0xA5);
    spcclSparseOptions_t options = optionsOf(c);
    if (!ok(spcclSparseAllReduceWithOptions(input.data(), output.data(), c.count, c.type, c.op,
                                            &options, comm_, nullptr),
            c, "spcclSparseAllReduceWithOptions"))
      return;
    compare(output, expected, c, "dense in, dense out");
    sameEverywhere(output, c);
  }

  // In place: sendbuff == recvbuff.
  void inPlaceCase(const Case& c) {
    std::vector<unsigned char> buffer = makeInput(c), expected = reference(c, buffer);
    spcclSparseOptions_t options = optionsOf(c);
    if (!ok(spcclSparseAllReduceWithOptions(buffer.data(), buffer.data(), c.count, c.type, c.op,
                                            &options, comm_, nullptr),
            c, "in-place spcclSparseAllReduceWithOptions"))
      return;
    compare(buffer, expected, c, "in place");
  }

  // COO in with unsorted duplicates (each non-zero v split as (v+1) and
  // (-1), shuffled), dense out and COO out.
  void cooCase(const Case& c, spcclIndexType_t indexType) {
    std::vector<unsigned char> dense = makeInput(c), expected = reference(c, dense);
    const size_t es = spcclTypeSize(c.type);
    std::vector<uint64_t> indices;
    std::vector<double> values;
    for (size_t i = 0; i < c.count; ++i) {
      if (!isNonZero(c.overlap, c.density, i, rank_, n_, c.count)) continue;
      const int v = smallValue(i, rank_);
      indices.push_back(i);
      values.push_back(v + 1);
      indices.push_back(i);
      values.push_back(-1);
    }
    for (size_t k = indices.size(); k > 1; --k) {  // deterministic shuffle
      size_t j = mix(k + static_cast<uint64_t>(rank_) * 7919) % k;
      std::swap(indices[k - 1], indices[j]);
      std::swap(values[k - 1], values[j]);
    }
    std::vector<unsigned char> rawIndices(indices.size() * (indexType == spcclIndexUint32 ? 4 : 8));
    std::vector<unsigned char> rawValues(values.size() * es);
    for (size_t k = 0; k < indices.size(); ++k) {
      if (indexType == spcclIndexUint32) {
        uint32_t i32 = static_cast<uint32_t>(indices[k]);
        std::memcpy(&rawIndices[k * 4], &i32, 4);
      } else {
        std::memcpy(&rawIndices[k * 8], &indices[k], 8);
      }
      storeValue(c.type, rawValues.data(), k, values[k]);
    }
    spcclSparseOptions_t options = optionsOf(c);
    std::vector<unsigned char> output(dense.size(), 0x5A);
    if (ok(spcclSparseAllReduceCoo(rawIndices.data(), indexType, rawValues.data(), indices.size(),
                                   c.count, c.type, c.op, output.data(), &options, comm_, nullptr),
           c, "spcclSparseAllReduceCoo"))
      compare(output, expected, c, "COO in, dense out");

    // COO out: the expected result's non-zeros, ascending.
    std::vector<uint64_t> wantIndices;
    std::vector<unsigned char> wantValues;
    const std::vector<unsigned char> zero(es, 0);
    for (size_t i = 0; i < c.count; ++i) {
      if (std::memcmp(&expected[i * es], zero.data(), es) == 0) continue;
      wantIndices.push_back(i);
      wantValues.insert(wantValues.end(), &expected[i * es], &expected[i * es] + es);
    }
    const size_t ib = indexType == spcclIndexUint32 ? 4 : 8;
    std::vector<unsigned char> outIndices((wantIndices.size() + 1) * ib),
        outValues((wantIndices.size() + 1) * es);
    size_t outNnz = 0;
    if (ok(spcclSparseAllReduceCooToCoo(rawIndices.data(), indexType, rawValues.data(),
                                        indices.size(), c.count, c.type, c.op, outIndices.data(),
                                        outValues.data(), wantIndices.size() + 1, &outNnz, &options,
                                        comm_, nullptr),
           c, "spcclSparseAllReduceCooToCoo")) {
      bool good = outNnz == wantIndices.size() &&
                  std::memcmp(outValues.data(), wantValues.data(), wantValues.size()) == 0;
      for (size_t k = 0; good && k < outNnz; ++k) {
        uint64_t got = 0;
        std::memcpy(&got, &outIndices[k * ib], ib);
        good = got == wantIndices[k];
      }
      expect(good, c, "COO out differs from the dense reference's non-zeros");
    }
    // Too small a capacity: every rank fails the same way and learns the size.
    if (!wantIndices.empty()) {
      size_t needed = 0;
      spcclResult_t res = spcclSparseAllReduceCooToCoo(
          rawIndices.data(), indexType, rawValues.data(), indices.size(), c.count, c.type, c.op,
          outIndices.data(), outValues.data(), wantIndices.size() - 1, &needed, &options, comm_,
          nullptr);
      expect(
          res == spcclInvalidUsage && needed == wantIndices.size(), c,
          "COO out with too small a capacity must fail with spcclInvalidUsage and report the size");
    }
  }

  // Inexact floats: the same bits on every rank and in a second run. Auto
  // plans with what the tag's previous call taught it (gamma, HC's stage
  // gammas: src/sparse/planner.h), so it may choose differently after a
  // call with other data; a first call with this input puts runs 1 and 2
  // in the same planner state. (Without it, a fresh-clone CI run under
  // ASan, 2026-11-25, saw the two runs differ: auto, shm, n = 3, d = 0.2.)
  void reproducibleCase(const Case& c) {
    const size_t es = spcclTypeSize(c.type);
    std::vector<unsigned char> input(c.count * es, 0);
    for (size_t i = 0; i < c.count; ++i)
      if (isNonZero(c.overlap, c.density, i, rank_, n_, c.count))
        storeValue(c.type, input.data(), i, uniform(i, 1000 + static_cast<uint64_t>(rank_)) - 0.3);
    spcclSparseOptions_t options = optionsOf(c);
    std::vector<unsigned char> first(input.size()), second(input.size());
    if (!ok(spcclSparseAllReduceWithOptions(input.data(), first.data(), c.count, c.type, c.op,
                                            &options, comm_, nullptr),
            c, "warm-up run") ||
        !ok(spcclSparseAllReduceWithOptions(input.data(), first.data(), c.count, c.type, c.op,
                                            &options, comm_, nullptr),
            c, "first run") ||
        !ok(spcclSparseAllReduceWithOptions(input.data(), second.data(), c.count, c.type, c.op,
                                            &options, comm_, nullptr),
            c, "second run"))
      return;
    expect(first == second, c, "two runs with the same input differ");
    sameEverywhere(first, c);
  }

  // Inexact f32 values, each rank's output compared bit for bit with the
  // sum in the schedule's own order, computed here from every rank's input:
  // HC's recursive doubling (tree: folded ranks first, then lower group +
  // higher group), AGsparse's and block sparse's rank order. The same
  // reference at a low density (sparse sets) and a high one (the dense
  // fallback, ordered_dense_allreduce.h) shows the switch keeps the bits.
  void orderedSumCase(const Case& c, bool tree) {
    auto valueOf = [&](int q, size_t i) {
      return isNonZero(c.overlap, c.density, i, q, n_, c.count)
                 ? static_cast<float>(uniform(i, 2000 + static_cast<uint64_t>(q)) - 0.3)
                 : 0.0f;
    };
    int p = 1;
    while (p * 2 <= n_) p *= 2;
    std::vector<float> input(c.count), want(c.count), got(c.count), leaves(static_cast<size_t>(p));
    for (size_t i = 0; i < c.count; ++i) {
      input[i] = valueOf(rank_, i);
      if (!tree) {
        float sum = 0.0f;
        for (int q = 0; q < n_; ++q) sum += valueOf(q, i);
        want[i] = sum;
        continue;
      }
      for (int q = 0; q < p; ++q)
        leaves[static_cast<size_t>(q)] =
            q + p < n_ ? valueOf(q, i) + valueOf(q + p, i) : valueOf(q, i);
      for (int stride = 1; stride < p; stride *= 2)
        for (int q = 0; q < p; q += 2 * stride)
          leaves[static_cast<size_t>(q)] += leaves[static_cast<size_t>(q + stride)];
      want[i] = leaves[0];
    }
    spcclSparseOptions_t options = optionsOf(c);
    if (!ok(spcclSparseAllReduceWithOptions(input.data(), got.data(), c.count, c.type, c.op,
                                            &options, comm_, nullptr),
            c, "spcclSparseAllReduceWithOptions"))
      return;
    size_t at = 0;
    while (at < c.count && std::memcmp(&got[at], &want[at], sizeof(float)) == 0) ++at;
    char what[160];
    std::snprintf(what, sizeof(what),
                  "inexact f32: output differs from the sum in the schedule's order at element "
                  "%zu (%a, expected %a)",
                  at, at < c.count ? static_cast<double>(got[at]) : 0.0,
                  at < c.count ? static_cast<double>(want[at]) : 0.0);
    expect(at == c.count, c, what);
  }

  // Messages this rank sent for one sparse call of c (counters around the
  // call alone: the reference all-reduce's count varies with the size).
  uint64_t messagesOf(const Case& c) {
    std::vector<unsigned char> input = makeInput(c), output(input.size());
    spcclSparseOptions_t options = optionsOf(c);
    spcclCounters_t before{}, after{};
    if (!ok(spcclCommGetCounters(comm_, &before), c, "spcclCommGetCounters") ||
        !ok(spcclSparseAllReduceWithOptions(input.data(), output.data(), c.count, c.type, c.op,
                                            &options, comm_, nullptr),
            c, "spcclSparseAllReduceWithOptions") ||
        !ok(spcclCommGetCounters(comm_, &after), c, "spcclCommGetCounters"))
      return 0;
    return after.messagesSent - before.messagesSent;
  }

  // That `cut` went out in pieces (SPCCL_SPARSE_PIECE_BYTES): at least one
  // more push and pull message per peer than a call of one message each.
  void sentInPieces(const Case& whole, const Case& cut) {
    const uint64_t one = messagesOf(whole), pieces = messagesOf(cut);
    char what[160];
    std::snprintf(what, sizeof(what),
                  "expected BP in pieces: %" PRIu64 " messages sent, %" PRIu64 " uncut", pieces,
                  one);
    expect(pieces >= one + 2 * static_cast<uint64_t>(n_ - 1), cut, what);
  }

  // The planner's choice and statistics agree on every rank.
  void statsAgree(uint64_t tag) {
    spcclSparseStats_t stats;
    std::memset(&stats, 0, sizeof(stats));
    stats.size = sizeof(stats);
    Case c;
    c.tag = tag;
    if (!ok(spcclSparseGetStats(comm_, tag, &stats), c, "spcclSparseGetStats")) return;
    expect(stats.calls > 0, c, "stats report no calls for a tag that ran");
    expect(stats.algorithm >= spcclSparseBalancedParallelism && stats.algorithm <= spcclSparseDense,
           c, "stats name no algorithm");
    uint64_t mine[2] = {static_cast<uint64_t>(stats.algorithm), stats.calls};
    std::vector<uint64_t> all(2 * static_cast<size_t>(n_));
    if (!ok(spcclAllGather(mine, all.data(), 2, spcclUint64, comm_, nullptr), c, "spcclAllGather"))
      return;
    for (int r = 0; r < n_; ++r)
      expect(all[2 * r] == mine[0] && all[2 * r + 1] == mine[1], c,
             "ranks disagree on the planner's choice");
    if (rank_ == 0)
      std::printf("tag %" PRIu64 ": %" PRIu64
                  " calls, last %d (%s), d %.3g gamma %.3g, push/pull "
                  "imbalance %.2f/%.2f\n",
                  tag, stats.calls, stats.algorithm, stats.reason, stats.density, stats.gamma,
                  stats.pushImbalance, stats.pullImbalance);
  }

 private:
  std::vector<unsigned char> makeInput(const Case& c) const {
    std::vector<unsigned char> input(c.count * spcclTypeSize(c.type), 0);
    for (size_t i = 0; i < c.count; ++i)
      if (isNonZero(c.overlap, c.density, i, rank_, n_, c.count))
        storeValue(c.type, input.data(), i, smallValue(i, rank_));
    return input;
  }

  std::vector<unsigned char> reference(const Case& c, const std::vector<unsigned char>& input) {
    std::vector<unsigned char> out(input.size());
    ok(spcclAllReduce(input.data(), out.data(), c.count, c.type, c.op, comm_, nullptr), c,
       "reference spcclAllReduce");
    return out;
  }

  static spcclSparseOptions_t optionsOf(const Case& c) {
    spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
    options.algorithm = c.algorithm;
    options.encoding = c.encoding;
    options.partitioner = c.partitioner;
    options.tag = c.tag;
    return options;
  }

  void compare(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want,
               const Case& c, const char* form) {
    if (got == want) return expect(true, c, form);
    const size_t es = spcclTypeSize(c.type);
    size_t at = 0;
    while (at < got.size() && got[at] == want[at]) ++at;
    char what[128];
    std::snprintf(what, sizeof(what), "%s: output differs from the dense all-reduce at element %zu",
                  form, at / es);
    expect(false, c, what);
  }

  void sameEverywhere(const std::vector<unsigned char>& output, const Case& c) {
    uint64_t hash = fnv1a(output.data(), output.size());
    std::vector<uint64_t> all(static_cast<size_t>(n_));
    if (!ok(spcclAllGather(&hash, all.data(), 1, spcclUint64, comm_, nullptr), c, "spcclAllGather"))
      return;
    for (int r = 0; r < n_; ++r) expect(all[r] == hash, c, "output differs between ranks");
  }

  bool ok(spcclResult_t res, const Case& c, const char* call) {
    if (res == spcclSuccess) return true;
    expect(false, c, (std::string(call) + " failed: " + spcclGetLastError(comm_)).c_str());
    if (res == spcclRemoteError || res == spcclTimeout || res == spcclSystemError) {
      std::fprintf(stderr, "rank %d: the communicator is broken; stopping\n", rank_);
      std::exit(2);
    }
    return false;
  }

  void expect(bool good, const Case& c, const char* what) {
    ++checks_;
    if (good) return;
    ++failures_;
    if (failures_ <= 20)
      std::fprintf(stderr, "rank %d: FAIL %s [%s]\n", rank_, what, describe(c).c_str());
  }

  spcclComm_t comm_;
  int rank_, n_;
  int failures_ = 0, checks_ = 0;
};

const spcclSparseAlgorithm_t kAlgorithms[] = {
    spcclSparseAuto,         spcclSparseBalancedParallelism,
    spcclSparseHierarchical, spcclSparseAllGather,
    spcclSparseBlock,        spcclSparseDense};
const spcclDataType_t kTypes[] = {spcclFloat32,  spcclFloat64, spcclFloat16,
                                  spcclBfloat16, spcclInt32,   spcclInt64};
const Overlap kOverlaps[] = {Overlap::Random, Overlap::Full, Overlap::None, Overlap::Skew,
                             Overlap::EmptyRanks};

// --bp-pieces (run with a small SPCCL_SPARSE_PIECE_BYTES): Balanced
// Parallelism with its messages cut into pieces (bp_pipeline.cc), below
// its dense-range switch (a mean density of 1/8), where owners' pieces
// are often empty (skewed, empty ranks, tiny tensors), every encoding and
// partitioner, against the dense all-reduce and, for inexact floats, the
// rank-order sum, bit for bit.
void checkBpPieces(Checker& check) {
  Case whole, cut;
  whole.algorithm = cut.algorithm = spcclSparseBalancedParallelism;
  whole.count = 100;
  cut.count = 200000 + 3;
  cut.density = 0.05;
  check.sentInPieces(whole, cut);
  for (int e = spcclEncodingAuto; e < spcclNumEncodings; ++e)
    for (int p = spcclPartitionAuto; p < spcclNumPartitioners; ++p)
      for (double d : {0.002, 0.02, 0.08})
        for (Overlap overlap : kOverlaps) {
          Case c;
          c.algorithm = spcclSparseBalancedParallelism;
          c.encoding = static_cast<spcclSparseEncoding_t>(e);
          c.partitioner = static_cast<spcclSparsePartitioner_t>(p);
          c.density = d;
          c.overlap = overlap;
          c.count = 60000 + 17;
          c.op = overlap == Overlap::Full ? spcclAvg : spcclSum;
          check.denseCase(c);
        }
  for (spcclDataType_t type : kTypes)
    for (size_t count : {size_t{5}, size_t{37}, size_t{3001}, size_t{100000}}) {
      Case c;
      c.algorithm = spcclSparseBalancedParallelism;
      c.type = type;
      c.count = count;
      c.density = 0.1;
      check.denseCase(c);
      check.inPlaceCase(c);
      check.cooCase(c, spcclIndexUint32);
    }
  for (double d : {0.01, 0.1}) {
    Case c;
    c.algorithm = spcclSparseBalancedParallelism;
    c.density = d;
    c.count = 80000 + 11;
    check.orderedSumCase(c, false);
    c.type = spcclFloat16;
    check.reproducibleCase(c);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, bpPieces = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--bp-pieces") == 0) bpPieces = true;
  }
  spcclComm_t comm = nullptr;
  if (spcclCommInitFromEnv(&comm, nullptr) != spcclSuccess) {
    std::fprintf(stderr, "init failed: %s\n", spcclGetLastError(nullptr));
    return 1;
  }
  int rank = 0, nranks = 1;
  spcclCommUserRank(comm, &rank);
  spcclCommCount(comm, &nranks);
  Checker check(comm, rank, nranks);
  if (bpPieces) {
    checkBpPieces(check);
    spcclCommDestroy(comm);
    std::printf("rank %d: %d checks, %d failures\n", rank, check.checks(), check.failures());
    return check.failures() == 0 ? 0 : 1;
  }

  // 1. Densities x overlap patterns x algorithms (f32, sum; avg on some).
  const double densities[] = {0, 1e-6, 1e-3, 1e-2, 0.1, 0.5, 1.0};
  for (double d : densities)
    for (Overlap overlap : kOverlaps) {
      if (quick && overlap != Overlap::Random && d != 0.01 && d != 0.5) continue;
      for (spcclSparseAlgorithm_t a : kAlgorithms) {
        Case c;
        c.density = d;
        c.overlap = overlap;
        c.algorithm = a;
        c.count = 9000 + 37;  // not a multiple of 256: block sparse's tail block
        c.op = overlap == Overlap::Full ? spcclAvg : spcclSum;
        check.denseCase(c);
      }
    }
  // 2. Data types x algorithms.
  for (spcclDataType_t type : kTypes)
    for (spcclSparseAlgorithm_t a : kAlgorithms)
      for (double d : {0.003, 0.3}) {
        Case c;
        c.type = type;
        c.algorithm = a;
        c.density = d;
        check.denseCase(c);
        if (!quick) {
          c.op = spcclAvg;
          check.denseCase(c);
        }
      }
  // 3. Encodings x partitioners (BP), encodings (HC, AGsparse).
  for (int e = spcclEncodingAuto; e < spcclNumEncodings; ++e)
    for (double d : {0.002, 0.2}) {
      for (int p = spcclPartitionAuto; p < spcclNumPartitioners; ++p) {
        Case c;
        c.algorithm = spcclSparseBalancedParallelism;
        c.encoding = static_cast<spcclSparseEncoding_t>(e);
        c.partitioner = static_cast<spcclSparsePartitioner_t>(p);
        c.density = d;
        c.overlap = Overlap::Skew;
        check.denseCase(c);
      }
      for (spcclSparseAlgorithm_t a : {spcclSparseHierarchical, spcclSparseAllGather}) {
        Case c;
        c.algorithm = a;
        c.encoding = static_cast<spcclSparseEncoding_t>(e);
        c.density = d;
        check.denseCase(c);
      }
    }
  // 4. In place, COO in and out, edge sizes.
  for (spcclSparseAlgorithm_t a : kAlgorithms) {
    Case c;
    c.algorithm = a;
    c.density = 0.05;
    check.inPlaceCase(c);
    c.type = spcclInt32;
    check.cooCase(c, spcclIndexUint32);
    c.type = spcclFloat64;
    c.op = spcclAvg;
    check.cooCase(c, spcclIndexUint64);
    for (size_t count : {size_t{0}, size_t{1}, size_t{255}, size_t{257}}) {
      Case edge;
      edge.algorithm = a;
      edge.count = count;
      edge.density = 0.5;
      check.denseCase(edge);
    }
  }
  // BP's dense-range schedule (mean density >= 1/8, bp_context.h) into a
  // COO output, which takes its own path out of the owners' accumulators.
  for (spcclIndexType_t indexType : {spcclIndexUint64, spcclIndexUint32}) {
    Case c;
    c.algorithm = spcclSparseBalancedParallelism;
    c.density = 0.3;
    check.cooCase(c, indexType);
  }
  // 4b. In place and COO in and out past the dense fallback's switch
  // (ordered_dense_allreduce.h: a COO input is densified first, a COO
  // output extracted from the workspace's tensor).
  for (spcclSparseAlgorithm_t a :
       {spcclSparseHierarchical, spcclSparseAllGather, spcclSparseBlock}) {
    Case c;
    c.algorithm = a;
    c.density = 0.6;
    check.inPlaceCase(c);
    check.cooCase(c, spcclIndexUint64);
  }
  // 5. Large tensors: multi-megabyte messages, every encoding's regime.
  for (spcclSparseAlgorithm_t a : kAlgorithms)
    for (double d : {1e-4, 0.02, 0.4}) {
      if (quick && d != 0.02) continue;
      Case c;
      c.algorithm = a;
      c.count = (1u << 20) + 3;
      c.density = d;
      check.denseCase(c);
    }
  // 6. Inexact floats: bitwise agreement across ranks and runs.
  for (spcclSparseAlgorithm_t a : kAlgorithms)
    for (spcclDataType_t type : {spcclFloat32, spcclFloat16}) {
      Case c;
      c.algorithm = a;
      c.type = type;
      c.density = 0.2;
      check.reproducibleCase(c);
    }
  // 6b. Inexact floats against the sum in each schedule's order, on the
  // sparse sets (d = 0.01) and past the dense fallback's switch.
  for (spcclSparseAlgorithm_t a : {spcclSparseHierarchical, spcclSparseAllGather, spcclSparseBlock})
    for (double d : {0.01, 0.3, 0.6}) {
      Case c;
      c.algorithm = a;
      c.density = d;
      c.count = 50000 + 11;
      check.orderedSumCase(c, a == spcclSparseHierarchical);
    }
  // 7. The planner: a tagged tensor over several calls, then its stats.
  for (int call = 0; call < 4; ++call) {
    Case c;
    c.tag = 42;
    c.density = call < 2 ? 0.001 : 0.2;  // drifts
    c.overlap = Overlap::Full;
    check.denseCase(c);
  }
  check.statsAgree(42);
  check.statsAgree(0);

  spcclCommDestroy(comm);
  std::printf("rank %d: %d checks, %d failures\n", rank, check.checks(), check.failures());
  return check.failures() == 0 ? 0 : 1;
}
