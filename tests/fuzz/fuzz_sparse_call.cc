// The first round of a sparse all-reduce (src/sparse/call_agreement.h):
// every rank's SparseCallHeader as its peers sent it, planned from the way
// runSparseAllReduce does: the overlap sketches' union estimate
// (overlap_sketch.h), the stage gammas and measured seconds of the tag's
// previous call, and the gamma to plan with (planner.h).
// Input: [ranks u8][density f64][a SparseCallHeader per rank].
#include <cmath>
#include <vector>

#include "fuzz_support.h"
#include "sparse/call_agreement.h"
#include "sparse/overlap_sketch.h"
#include "sparse/planner.h"

using namespace spccl;
using namespace spccl::sparse;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const int n = 1 + in.take<uint8_t>() % 8;
  const double density = in.take<double>();
  std::vector<SparseCallHeader> headers(n);
  for (SparseCallHeader& h : headers) h = in.take<SparseCallHeader>();

  std::vector<uint64_t> rankNnz(n);
  std::vector<OverlapSketch> sketches(n);
  uint64_t total = 0;
  for (int r = 0; r < n; ++r) {
    rankNnz[r] = headers[r].nnz;
    sketches[r] = headers[r].sketch;
    total += rankNnz[r];
  }
  const double meanNnz = static_cast<double>(total) / n;
  const double unionSize = estimateUnionSize(sketches, rankNnz);
  SPCCL_FUZZ_CHECK(unionSize >= 0);
  const double sketchGamma = meanNnz > 0 ? unionSize / meanNnz : 0.0;

  TagProfile profile;
  std::vector<int32_t> stages, algorithms;
  std::vector<const double*> gammas;
  std::vector<double> seconds;
  for (const SparseCallHeader& h : headers) {
    stages.push_back(h.mergeStages);
    gammas.push_back(h.stageGamma);
    algorithms.push_back(h.lastAlgorithm);
    seconds.push_back(h.lastSeconds);
  }
  learnStageGammas(&profile, stages, gammas);
  SPCCL_FUZZ_CHECK(profile.learnedStages >= 0 && profile.learnedStages <= kMaxMergeStages);
  learnMeasuredSeconds(&profile, algorithms, seconds);
  if (std::isfinite(density) && density >= 0 && density <= 1) {
    const GammaEstimate gamma = planningGamma(profile, density, n, sketchGamma);
    // planner.h: clamped to [1, n].
    if (std::isfinite(gamma.gamma)) SPCCL_FUZZ_CHECK(gamma.gamma >= 1 && gamma.gamma <= n);
  }
  return 0;
}
