// The device-resident paths added after the first GPU stages (docs/gpu.md),
// in spccl_gpu_collective_tests (GpuDevicePaths.*; the fixture, the world
// and the checks are gpu_collectives_world.h and collective_checks.h):
// in-place all-to-all and all-to-allv through the communicator's scratch;
// all-to-all(v) with an all-reduce in one group; scatter and gather; the compressed all-reduce
// with a residual (error feedback) in device memory, f32/f16/bf16; the
// token top-k and mask all-reduces with a device residual. Each device
// call is compared with the CPU reference, or, where error feedback makes
// the result depend on the earlier calls, with the same calls on host
// memory, which the spec says give the same bits. The stage scripts
// (run_device_all_reduce.sh, run_device_codecs.sh, run_device_tokens.sh)
// run these with SPCCL_STAGING_REPORT=1 and require the report to count
// every device call on the path: the counts they expect follow from the
// loops here (2 streams on a GPU), so keep them in step.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../common/coll_reference.h"
#include "../integration/test_compressed_support.h"
#include "collective_checks.h"
#include "gpu_collectives_world.h"
#include "memory_kinds.h"
#include "spccl.h"

namespace {

using spccl::gpu_test::KindBuffer;
using spccl::testing::inputOf;
using spccl::testing::TypedBuffer;
using namespace spccl::gpu_coll_test;

class GpuDevicePaths : public GpuCollectives {};

std::vector<char> asChars(const std::vector<unsigned char>& bytes, size_t size) {
  return {bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size)};
}

// 3 types x 3 counts (each larger than the last, so the scratch grows and
// is reused) x the stream forms: 18 in-place all-to-all and 18 in-place
// all-to-allv calls per rank on a GPU.
TEST_F(GpuDevicePaths, InPlaceAllToAllAndAllToAllv) {
  const std::vector<size_t> counts =
      smallRun() ? std::vector<size_t>{5, 257, 1031} : std::vector<size_t>{5, 4097, 131101};
  for (cudaStream_t s : streams())
    for (spcclDataType_t type : {spcclFloat32, spcclBfloat16, spcclInt64})
      for (size_t count : counts) {
        checkAllToAll(s, type, count, true);
        checkAllToAllv(s, type, count, true);
      }
}

// An MoE layer's group: an all-to-all out of place, one in place, an
// all-to-allv out of place and one in place, and an all-reduce, per stream
// form: 4 all-to-all, 4 all-to-allv and 2 all-reduce calls per rank on a
// GPU, all device-resident.
TEST_F(GpuDevicePaths, GroupedAllToAllAndAllReduce) {
  for (cudaStream_t s : streams()) {
    AllToAllCheck outOfPlace(s, spcclFloat32, 1000, false), inPlace(s, spcclBfloat16, 777, true);
    AllToAllvCheck vOutOfPlace(s, spcclInt32, 500, false), vInPlace(s, spcclFloat64, 301, true);
    AllReduceCheck reduced(s, spcclFloat32, spcclSum, 4097, false);
    const std::string what = std::string("rank ") + std::to_string(rank()) +
                             ": grouped all-to-all(v) and all-reduce, " + streamName(s);
    expectSuccess(spcclGroupStart(), "spcclGroupStart, " + what);
    expectSuccess(outOfPlace.issue(), outOfPlace.what());
    expectSuccess(inPlace.issue(), inPlace.what());
    expectSuccess(vOutOfPlace.issue(), vOutOfPlace.what());
    expectSuccess(vInPlace.issue(), vInPlace.what());
    expectSuccess(reduced.issue(), reduced.what());
    expectSuccess(spcclGroupEnd(), "spcclGroupEnd, " + what);
    outOfPlace.verify();
    inPlace.verify();
    vOutOfPlace.verify();
    vInPlace.verify();
    reduced.verify();
  }
}

// Scatter and gather of device buffers, device-resident on one host
// (migrate/device_scatter_gather.h): 3 types x 2 counts x the stream forms,
// the root moving round the ranks: 12 scatter and 12 gather calls per rank
// on a GPU.
TEST_F(GpuDevicePaths, ScatterAndGather) {
  int round = 0;
  for (cudaStream_t s : streams())
    for (spcclDataType_t type : {spcclFloat32, spcclBfloat16, spcclInt64})
      for (size_t count : {size_t{5}, size_t{4097}}) {
        checkScatter(s, type, count, round % nranks());
        checkGather(s, type, count, round++ % nranks());
      }
}

// One residual (error feedback) in "device" memory and its twin on the
// host, both zero as the caller must hand them to the first call; attach()
// points a device config and a host config at them.
class ResidualPair {
 public:
  ResidualPair(size_t count, cudaStream_t s)
      : device_(deviceKind(), count * sizeof(float)), host_(count, 0.0f), stream_(s) {
    device_.upload(host_.data(), count * sizeof(float), s);
  }
  void attach(spcclCompression& deviceCfg, spcclCompression& hostCfg) {
    deviceCfg.residual = device_.as<float>();
    hostCfg.residual = host_.data();
  }
  // The two residuals hold the same bits, and error feedback changed them.
  void expectSame(const std::string& what) const {
    const std::vector<unsigned char> got = device_.download(stream_);
    const std::vector<char> want(reinterpret_cast<const char*>(host_.data()),
                                 reinterpret_cast<const char*>(host_.data() + host_.size()));
    expectElements(want, got, spcclFloat32, host_.size(), what + ": residual");
    bool fedBack = false;
    for (float r : host_) fedBack = fedBack || r != 0.0f;
    EXPECT_TRUE(fedBack) << what << ": the residual stayed zero";
  }

 private:
  KindBuffer device_;
  std::vector<float> host_;
  cudaStream_t stream_;
};

// Error feedback (cfg->residual) on the device codec path: three
// consecutive two-shot calls per type and op sharing a residual in device
// memory, the second in place. The first call (residual zero) is within
// the bound of docs/compressed.md; every output and the final residual
// equal, bit for bit, the same three calls on host memory with a host
// residual (the CPU path). 3 types x 2 ops x 3 calls x the stream forms:
// 36 calls per rank on the device path on a GPU.
void checkCompressedWithResidual(cudaStream_t s, spcclDataType_t type, spcclRedOp_t op,
                                 uint64_t salt) {
  const World& w = world();
  const size_t count = smallRun() ? 1500 : 20011;
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.schedule = spcclCompressTwoShot;
  cfg.codec = salt % 2 ? spcclCodecPiecewise : spcclCodecLinear;
  cfg.bits = salt % 2 ? 4 : 3;
  spcclCompression hostCfg = cfg;
  ResidualPair residual(count, s);
  residual.attach(cfg, hostCfg);
  const size_t es = spcclTypeSize(type);
  for (int call = 0; call < 3; ++call) {
    const bool inPlace = call == 1;
    std::vector<TypedBuffer> inputs;
    for (int r = 0; r < w.nranks; ++r) inputs.push_back(inputOf(r, type, count, salt + call));
    const std::string what = describe("CompressedAllReduce", type, op, count, inPlace, s) + " " +
                             std::to_string(cfg.bits) + " bits, residual, call " +
                             std::to_string(call + 1);
    KindBuffer send(deviceKind(), count * es), recv(deviceKind(), count * es);
    send.upload(inputs[w.rank].bytes.data(), count * es, s);
    KindBuffer& out = inPlace ? send : recv;
    expectSuccess(spcclCompressedAllReduce(send.get(), out.get(), count, type, op, &cfg, w.comm, s),
                  what);
    const std::vector<unsigned char> got = out.download(s);
    TypedBuffer hostOut(type, count);
    expectSuccess(spcclCompressedAllReduce(inputs[w.rank].bytes.data(), hostOut.bytes.data(), count,
                                           type, op, &hostCfg, w.comm, nullptr),
                  what + " on host memory");
    expectElements(asChars(hostOut.bytes, count * es), got, type, count,
                   what + " against host memory");
    if (call == 0) {  // the residual was zero: the bound of a call without one
      TypedBuffer result(type, count);
      std::memcpy(result.bytes.data(), got.data(), count * es);
      EXPECT_EQ(spccl::testing::compressedBoundViolation(inputs, result, cfg.codec, cfg.bits,
                                                         cfg.blockSize, cfg.schedule, op),
                "")
          << what;
    }
    expectSameOnEveryRank(got.data(), count * es, what);
  }
  residual.expectSame(describe("CompressedAllReduce", type, op, count, false, s));
}

TEST_F(GpuDevicePaths, CompressedAllReduceWithDeviceResidual) {
  uint64_t salt = 100;
  for (cudaStream_t s : streams())
    for (spcclDataType_t type : kFloatTypes)
      for (spcclRedOp_t op : {spcclSum, spcclAvg}) checkCompressedWithResidual(s, type, op, ++salt);
}

// The token all-reduces with error feedback (cfg->residual, tokens x
// hidden floats in device memory): per type three rounds of a top-k call
// (scores that change every round, so the kept rows do) then a mask call
// with its mask, sharing one residual; tensor, maskOut and the final
// residual equal, bit for bit, the same calls on host memory. 3 types x 3
// rounds x 2 calls x the stream forms: 36 calls per rank moved on the
// device on a GPU.
TEST_F(GpuDevicePaths, TokenAllReducesWithDeviceResidual) {
  const size_t tokens = 64, hidden = 96, elements = tokens * hidden, keep = 16;
  uint64_t salt = 200;
  for (cudaStream_t s : streams())
    for (spcclDataType_t type : kFloatTypes) {
      const size_t es = spcclTypeSize(type);
      spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
      cfg.codec = spcclCodecLinear;
      cfg.bits = 4;
      spcclCompression hostCfg = cfg;
      ResidualPair residual(elements, s);
      residual.attach(cfg, hostCfg);
      for (int round = 0; round < 3; ++round) {
        ++salt;
        const std::string what = describe("TokenTopkAllReduce", type, spcclSum, elements, true, s) +
                                 " keep " + std::to_string(keep) + ", residual, round " +
                                 std::to_string(round + 1);
        TypedBuffer input = inputOf(rank(), type, elements, salt);
        const std::vector<float> scores = spccl::testing::scoresOf(rank() + round, tokens);
        KindBuffer buff(deviceKind(), elements * es), dScores(deviceKind(), tokens * 4),
            maskOut(deviceKind(), tokens);
        buff.upload(input.bytes.data(), elements * es, s);
        dScores.upload(scores.data(), tokens * 4, s);
        expectSuccess(spcclTokenTopkAllReduce(buff.get(), dScores.as<float>(), tokens, hidden, type,
                                              spcclSum, keep, &cfg, spcclPruneZero,
                                              maskOut.as<unsigned char>(), comm(), s),
                      what);
        TypedBuffer hostBuff = input;
        std::vector<unsigned char> hostMask(tokens, 0);
        expectSuccess(spcclTokenTopkAllReduce(hostBuff.bytes.data(), scores.data(), tokens, hidden,
                                              type, spcclSum, keep, &hostCfg, spcclPruneZero,
                                              hostMask.data(), comm(), nullptr),
                      what + " on host memory");
        expectElements(asChars(hostBuff.bytes, elements * es), buff.download(s), type, elements,
                       what + " against host memory");
        EXPECT_EQ(maskOut.download(s), hostMask) << what << ": mask";

        // The mask form with that mask, pruned rows keeping this rank's sum.
        const std::string maskWhat =
            describe("TokenMaskAllReduce", type, spcclSum, elements, true, s) +
            ", residual, round " + std::to_string(round + 1);
        TypedBuffer maskInput = inputOf(rank(), type, elements, salt + 1000);
        KindBuffer maskBuff(deviceKind(), elements * es), dMask(deviceKind(), tokens);
        maskBuff.upload(maskInput.bytes.data(), elements * es, s);
        dMask.upload(hostMask.data(), tokens, s);
        expectSuccess(
            spcclTokenMaskAllReduce(maskBuff.get(), dMask.as<unsigned char>(), tokens, hidden, type,
                                    spcclSum, &cfg, spcclPruneKeepLocal, comm(), s),
            maskWhat);
        expectSuccess(
            spcclTokenMaskAllReduce(maskInput.bytes.data(), hostMask.data(), tokens, hidden, type,
                                    spcclSum, &hostCfg, spcclPruneKeepLocal, comm(), nullptr),
            maskWhat + " on host memory");
        expectElements(asChars(maskInput.bytes, elements * es), maskBuff.download(s), type,
                       elements, maskWhat + " against host memory");
      }
      residual.expectSame(describe("token all-reduces", type, spcclSum, elements, true, s));
    }
}

}  // namespace
