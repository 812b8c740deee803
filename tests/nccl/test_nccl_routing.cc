// The NCCL interposer's routing of device all-reduces in forward mode
// (interpose/nccl/routing.h, density_probe.h): the decision itself, the
// sample's plan, and the density agreement over a real 2-rank spccl
// communicator in this process (host buffers: the copies are memmoves
// without the CUDA driver). Forward mode end to end needs a GPU and the
// real NCCL; this checks what runs without them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "density_probe.h"
#include "interposed_comm.h"
#include "routing.h"
#include "settings.h"

namespace spccl::nccl {
namespace {

Settings forwardSettings(double deviceDensity) {
  Settings s;
  s.mode = Mode::Forward;
  s.minBytes = 65536;
  s.sparse = true;
  s.deviceDensity = deviceDensity;
  return s;
}

CallShape deviceAllReduce(size_t count) {
  CallShape c;
  c.allReduce = true;
  c.datatype = ncclFloat32;
  c.op = ncclSum;
  c.bytes = count * sizeof(float);
  c.nranks = 4;
  c.deviceBuffers = true;
  return c;
}

TEST(NcclRouting, ForwardDeviceAllReduceStaysOnNcclWithoutTheKnob) {
  const Route r = decideRoute(forwardSettings(0), deviceAllReduce(1 << 20));
  EXPECT_EQ(r.target, Target::Nccl);
  EXPECT_EQ(r.reason, Reason::DeviceBuffer);
  EXPECT_FALSE(r.needsDensity);
}

TEST(NcclRouting, ForwardDeviceAllReduceAsksForTheDensity) {
  const Settings s = forwardSettings(0.05);
  const Route r = decideRoute(s, deviceAllReduce(1 << 20));
  EXPECT_EQ(r.target, Target::SpcclSparse);
  EXPECT_TRUE(r.needsDensity);
  EXPECT_EQ(routeByDensity(s, r, 0.01).target, Target::SpcclSparse);
  EXPECT_FALSE(routeByDensity(s, r, 0.01).needsDensity);
  EXPECT_EQ(routeByDensity(s, r, 0.05).target, Target::SpcclSparse);  // at most: included
  const Route dense = routeByDensity(s, r, 0.2);
  EXPECT_EQ(dense.target, Target::Nccl);
  EXPECT_EQ(dense.reason, Reason::DeviceDense);
  EXPECT_EQ(pathName(dense, s.compress),
            "nccl (device buffers, denser than SPCCL_NCCL_DEVICE_DENSITY)");
}

TEST(NcclRouting, ForwardDeviceCallsThatSpcclWouldNotTakeStayOnNccl) {
  const Settings s = forwardSettings(0.05);
  CallShape small = deviceAllReduce(100);  // below SPCCL_INTERPOSE_MIN_BYTES
  CallShape ints = deviceAllReduce(1 << 20);
  ints.datatype = ncclInt32;
  CallShape max = deviceAllReduce(1 << 20);
  max.op = ncclMax;
  CallShape gather = deviceAllReduce(1 << 20);
  gather.allReduce = false;
  for (const CallShape& c : {small, ints, max, gather}) {
    const Route r = decideRoute(s, c);
    EXPECT_EQ(r.target, Target::Nccl);
    EXPECT_FALSE(r.needsDensity);
  }
  Settings sparseOff = s;
  sparseOff.sparse = false;
  EXPECT_EQ(decideRoute(sparseOff, deviceAllReduce(1 << 20)).target, Target::Nccl);
}

TEST(NcclRouting, ForwardDeviceAllReduceInAGroupSkipsTheProbe) {
  const Route r = decideRoute(forwardSettings(0.05), deviceAllReduce(1 << 20), true);
  EXPECT_EQ(r.target, Target::Nccl);
  EXPECT_EQ(r.reason, Reason::DeviceInGroup);
  EXPECT_FALSE(r.needsDensity);
}

TEST(NcclRouting, ForwardDeviceCompressionIsOptedInAndNeedsNoData) {
  Settings s = forwardSettings(0);
  s.compress.enabled = true;
  const Route r = decideRoute(s, deviceAllReduce(1 << 20), true);
  EXPECT_EQ(r.target, Target::SpcclCompressed);
  EXPECT_FALSE(r.needsDensity);
}

TEST(NcclRouting, HostAndReplaceRoutesAreUnchanged) {
  const Settings forward = forwardSettings(0.05);
  CallShape host = deviceAllReduce(1 << 20);
  host.deviceBuffers = false;
  Route r = decideRoute(forward, host);
  EXPECT_EQ(r.target, Target::SpcclSparse);
  EXPECT_FALSE(r.needsDensity);  // the planner decides inside spccl
  Settings replace = forward;
  replace.mode = Mode::Replace;
  r = decideRoute(replace, deviceAllReduce(1 << 20));
  EXPECT_EQ(r.target, Target::SpcclSparse);
  EXPECT_FALSE(r.needsDensity);
  CallShape small = deviceAllReduce(100);
  EXPECT_EQ(decideRoute(replace, small).target, Target::SpcclDense);
}

TEST(NcclRouting, DensityKnobParsing) {
  double d = -1;
  EXPECT_TRUE(parseDensity("0", &d));
  EXPECT_EQ(d, 0);
  EXPECT_TRUE(parseDensity("0.05", &d));
  EXPECT_DOUBLE_EQ(d, 0.05);
  EXPECT_TRUE(parseDensity("1", &d));
  for (const char* bad : {"", "x", "0.1x", "-0.1", "1.5", "nan"}) {
    EXPECT_FALSE(parseDensity(bad, &d)) << bad;
    EXPECT_EQ(d, 0) << bad;
  }
}

TEST(NcclDensityProbe, SamplePlanCoversTheBufferWithinBounds) {
  // Small: all of it.
  SamplePlan p = planSample(1000, 4);
  EXPECT_EQ(p.chunks, 1U);
  EXPECT_EQ(p.chunkElements, 1000U);
  // Large: kSampleChunks runs of kSampleChunkBytes, spread to the end.
  for (size_t count : {size_t{16385}, size_t{1} << 20, size_t{12345677}}) {
    p = planSample(count, 4);
    EXPECT_EQ(p.chunks, kSampleChunks);
    EXPECT_EQ(p.chunkElements, kSampleChunkBytes / 4);
    EXPECT_LE((p.chunks - 1) * p.strideElements + p.chunkElements, count);
    EXPECT_GE((p.chunks - 1) * p.strideElements, count - 2 * p.strideElements);
  }
  EXPECT_EQ(planSample(0, 4).chunks, 0U);
}

TEST(NcclDensityProbe, CountsNonzeroElements) {
  const float f[6] = {0.0f, 1.0f, 0.0f, -0.0f, 2.5f, 0.0f};
  unsigned char bytes[sizeof(f)];
  std::memcpy(bytes, f, sizeof(f));
  EXPECT_EQ(countNonzero(bytes, 6, 4), 3U);  // -0.0 counts
  const uint16_t half[4] = {0, 0x3c00, 0, 0x0001};
  std::memcpy(bytes, half, sizeof(half));
  EXPECT_EQ(countNonzero(bytes, 4, 2), 2U);
}

// Two ranks in this process, each with data of a different density: both
// get the same agreed value, the mean of the two sampled fractions.
TEST(NcclDensityProbe, RanksAgreeOnOneDensity) {
  spcclUniqueId id;
  ASSERT_EQ(spcclGetUniqueId(&id), spcclSuccess);
  const size_t count = size_t{1} << 18;  // sampled in kSampleChunks runs
  const double densities[2] = {0.01, 0.5};
  double agreed[2] = {-1, -1};
  spcclResult_t results[2] = {spcclInternalError, spcclInternalError};
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      InterposedComm comm;
      if (spcclCommInitRank(&comm.spccl, 2, id, rank) != spcclSuccess) return;
      comm.rank = rank;
      comm.nranks = 2;
      // Every k-th element nonzero: the strided sample sees the density.
      std::vector<float> data(count, 0.0f);
      const auto every = static_cast<size_t>(std::lround(1.0 / densities[rank]));
      for (size_t i = 0; i < count; i += every) data[i] = 1.0f;
      CollCall call;
      call.name = "ncclAllReduce";
      call.sendbuff = data.data();
      call.recvbuff = data.data();
      call.count = count;
      call.datatype = ncclFloat32;
      results[rank] = agreedDensity(&comm, call, &agreed[rank]);
      spcclCommDestroy(comm.spccl);
      comm.spccl = nullptr;
    });
  for (std::thread& t : ranks) t.join();
  ASSERT_EQ(results[0], spcclSuccess);
  ASSERT_EQ(results[1], spcclSuccess);
  EXPECT_EQ(agreed[0], agreed[1]);  // bit for bit: the same two sums
  EXPECT_NEAR(agreed[0], (densities[0] + densities[1]) / 2, 0.01);
}

}  // namespace
}  // namespace spccl::nccl
