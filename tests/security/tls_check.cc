// One rank of the TLS tests (test_tls.py): spcclCommInitFromEnv, then
//   - an f32 sum all-reduce of 1 Mi elements, every element checked;
//   - a uint8 max all-reduce of 1 MiB that every rank fills with the same
//     marker text, so the marker is what goes on the wire (a ring sends
//     its input as is) and the result must be the marker again.
// Prints "tls_check: rank R OK"; a failure prints the error and exits 1.
#include <cstdio>
#include <cstring>
#include <vector>

#include "spccl.h"

namespace {

constexpr size_t kFloats = 1 << 20;
constexpr size_t kMarkerBytes = 1 << 20;
constexpr char kMarker[] = "spccl-tls-cleartext-marker:";

int failed(const char* what, int rank, spcclResult_t res) {
  std::fprintf(stderr, "tls_check: rank %d: %s: %s: %s\n", rank, what, spcclGetErrorString(res),
               spcclGetLastError(nullptr));
  return 1;
}

}  // namespace

int main() {
  spcclComm_t comm = nullptr;
  spcclResult_t res = spcclCommInitFromEnv(&comm, nullptr);
  if (res != spcclSuccess) return failed("init failed", -1, res);
  int rank = 0, nranks = 0;
  spcclCommUserRank(comm, &rank);
  spcclCommCount(comm, &nranks);

  std::vector<float> values(kFloats);
  for (size_t i = 0; i < kFloats; ++i) values[i] = static_cast<float>((i % 1000) + rank);
  res =
      spcclAllReduce(values.data(), values.data(), kFloats, spcclFloat32, spcclSum, comm, nullptr);
  if (res != spcclSuccess) return failed("f32 all-reduce", rank, res);
  const float rankSum = static_cast<float>(nranks * (nranks - 1) / 2);
  for (size_t i = 0; i < kFloats; ++i) {
    const float expected = static_cast<float>(nranks * static_cast<int>(i % 1000)) + rankSum;
    if (values[i] != expected) {
      std::fprintf(stderr, "tls_check: rank %d: f32 element %zu is %g, expected %g\n", rank, i,
                   static_cast<double>(values[i]), static_cast<double>(expected));
      return 1;
    }
  }

  std::vector<unsigned char> marker(kMarkerBytes);
  for (size_t i = 0; i < kMarkerBytes; ++i) marker[i] = kMarker[i % (sizeof(kMarker) - 1)];
  std::vector<unsigned char> result(kMarkerBytes);
  res = spcclAllReduce(marker.data(), result.data(), kMarkerBytes, spcclUint8, spcclMax, comm,
                       nullptr);
  if (res != spcclSuccess) return failed("uint8 all-reduce", rank, res);
  if (result != marker) {
    std::fprintf(stderr, "tls_check: rank %d: the marker all-reduce differs\n", rank);
    return 1;
  }
  std::printf("tls_check: rank %d OK\n", rank);
  spcclCommDestroy(comm);
  return 0;
}
