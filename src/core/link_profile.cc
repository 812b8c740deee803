#include "core/link_profile.h"

#include <algorithm>
#include <vector>

#include "base/check.h"
#include "base/clock.h"
#include "coll/small_allgather.h"
#include "core/comm.h"

namespace spccl {

namespace {

constexpr int kSmallIterations = 10;
constexpr int kLargeIterations = 3;
constexpr size_t kLargeBytes = 1 << 20;

// Seconds per step of a ring shift of `bytes` (send right, receive left).
spcclResult_t timeRingShift(Engine& engine, size_t bytes, int iterations, double* seconds) {
  const int n = engine.nranks(), r = engine.rank();
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  std::vector<unsigned char> out(bytes, 0x5a), in(bytes);
  CollSignature sig{CollType::Internal, spcclUint8, spcclSum, -1, bytes};
  double start = 0;
  for (int it = -1; it < iterations; ++it) {  // iteration -1 warms up
    if (it == 0) start = monotonicSeconds();
    uint64_t seq = 0;
    SPCCL_CHECK(engine.beginCollective(sig, &seq));
    int slots[2];
    SPCCL_CHECK(engine.postRecv(left, in.data(), bytes, sig, seq, &slots[1]));
    SPCCL_CHECK(engine.postSend(right, out.data(), bytes, sig, seq, 0, &slots[0]));
    SPCCL_CHECK(engine.wait(slots));
  }
  *seconds = (monotonicSeconds() - start) / iterations;
  return spcclSuccess;
}

// Every rank ends with the element-wise maxima over all ranks.
spcclResult_t agreeOnMaxima(Engine& engine, std::vector<double>* values) {
  const size_t count = values->size();
  std::vector<double> all(count * engine.nranks());
  SPCCL_CHECK(internalAllGather(engine, values->data(), count * sizeof(double), all.data()));
  for (int peer = 0; peer < engine.nranks(); ++peer)
    for (size_t i = 0; i < count; ++i) (*values)[i] = std::max((*values)[i], all[peer * count + i]);
  return spcclSuccess;
}

}  // namespace

spcclResult_t profileLinks(spcclComm& comm) {
  Engine& engine = *comm.engine;
  double small = 0, large = 0;
  SPCCL_CHECK(timeRingShift(engine, 8, kSmallIterations, &small));
  SPCCL_CHECK(timeRingShift(engine, kLargeBytes, kLargeIterations, &large));
  std::vector<double> measured = {small, std::max(large - small, 1e-9) / kLargeBytes};
  SPCCL_CHECK(agreeOnMaxima(engine, &measured));
  LinkModel& model = engine.linkModel();
  model.alphaSeconds = measured[0];
  model.betaSecondsPerByte = measured[1];
  model.measured = true;
  SPCCL_INFO(kLogTune, "rank %d: links measured: alpha %.1f us, %.3f GB/s (slowest rank's)",
             comm.rank, model.alphaSeconds * 1e6, 1e-9 / model.betaSecondsPerByte);
  return spcclSuccess;
}

}  // namespace spccl
