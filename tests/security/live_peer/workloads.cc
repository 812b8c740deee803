#include "workloads.h"

#include <cstring>
#include <vector>

namespace spccl::livefuzz {

namespace {

constexpr size_t kDenseCount = 1 << 15;
constexpr size_t kSparseCount = 1 << 16;
constexpr size_t kCompressedCount = 1 << 14;

uint64_t fnv1a(const void* data, size_t bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Rank r's element i: small integers, so sums are exact in f32.
float denseValue(int rank, size_t i) { return static_cast<float>((i * 7 + rank * 13) % 97); }

// About 5 % of the elements are non-zero on each rank, a different 5 %
// per rank with some overlap.
float sparseValue(int rank, size_t i) {
  uint64_t h = (i * 0x9e3779b97f4a7c15ull) ^ (static_cast<uint64_t>(rank) * 0xc2b2ae3d27d4eb4full);
  h ^= h >> 29;
  if (h % 20 != 0) return 0.0f;
  return static_cast<float>(1 + (i + rank) % 9);
}

void compare(const std::vector<float>& got, const std::vector<float>& want, WorkloadResult* out) {
  out->checked = true;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      out->matches = false;
      out->mismatch = "element " + std::to_string(i) + " is " + std::to_string(got[i]) +
                      ", expected " + std::to_string(want[i]);
      return;
    }
  }
}

void finish(spcclResult_t code, spcclComm_t comm, const std::vector<float>& result,
            WorkloadResult* out) {
  out->code = code;
  if (code != spcclSuccess) out->error = spcclGetLastError(comm);
  out->hash = fnv1a(result.data(), result.size() * sizeof(float));
}

WorkloadResult runExact(float (*value)(int, size_t), size_t count, spcclComm_t comm,
                        spcclSparseEncoding_t encoding, bool sparse) {
  int rank = 0, nranks = 0;
  spcclCommUserRank(comm, &rank);
  spcclCommCount(comm, &nranks);
  std::vector<float> in(count), out(count, -1.0f), want(count, 0.0f);
  for (size_t i = 0; i < count; ++i) {
    in[i] = value(rank, i);
    for (int r = 0; r < nranks; ++r) want[i] += value(r, i);
  }
  spcclResult_t res;
  if (sparse) {
    spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
    options.encoding = encoding;
    res = spcclSparseAllReduceWithOptions(in.data(), out.data(), count, spcclFloat32, spcclSum,
                                          &options, comm, nullptr);
  } else {
    res = spcclAllReduce(in.data(), out.data(), count, spcclFloat32, spcclSum, comm, nullptr);
  }
  WorkloadResult result;
  finish(res, comm, out, &result);
  if (res == spcclSuccess) compare(out, want, &result);
  return result;
}

WorkloadResult runCompressed(spcclCompressSchedule_t schedule, spcclComm_t comm) {
  int rank = 0;
  spcclCommUserRank(comm, &rank);
  std::vector<float> in(kCompressedCount), out(kCompressedCount, -1.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = denseValue(rank, i) / 16.0f - 3.0f;
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.schedule = schedule;
  WorkloadResult result;
  finish(spcclCompressedAllReduce(in.data(), out.data(), in.size(), spcclFloat32, spcclSum, &cfg,
                                  comm, nullptr),
         comm, out, &result);
  return result;
}

}  // namespace

bool knownWorkload(const std::string& name) {
  return name == "dense" || name == "sparse_coo" || name == "sparse_bitmap" ||
         name == "sparse_packed" || name == "compressed_twoshot" || name == "compressed_ring";
}

WorkloadResult runWorkload(const std::string& name, spcclComm_t comm) {
  if (name == "dense") return runExact(denseValue, kDenseCount, comm, spcclEncodingAuto, false);
  if (name == "sparse_coo")
    return runExact(sparseValue, kSparseCount, comm, spcclEncodingCoo, true);
  if (name == "sparse_bitmap")
    return runExact(sparseValue, kSparseCount, comm, spcclEncodingBitmap, true);
  if (name == "sparse_packed")
    return runExact(sparseValue, kSparseCount, comm, spcclEncodingPacked, true);
  if (name == "compressed_ring") return runCompressed(spcclCompressRing, comm);
  return runCompressed(spcclCompressTwoShot, comm);
}

}  // namespace spccl::livefuzz
