#include "density_probe.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/log.h"
#include "interposed_comm.h"
#include "memory_kind.h"
#include "routing.h"

namespace spccl::nccl {

SamplePlan planSample(size_t count, size_t elementBytes) {
  SamplePlan plan;
  if (count == 0 || elementBytes == 0) return plan;
  plan.chunkElements = std::max<size_t>(1, kSampleChunkBytes / elementBytes);
  if (count <= plan.chunkElements * kSampleChunks) {
    // Small enough: all of it, as one run.
    plan.chunks = 1;
    plan.chunkElements = count;
    plan.strideElements = count;
    return plan;
  }
  plan.chunks = kSampleChunks;
  plan.strideElements = count / kSampleChunks;  // >= chunkElements: count is larger
  return plan;
}

size_t countNonzero(const unsigned char* data, size_t elements, size_t elementBytes) {
  size_t nonzero = 0;
  for (size_t i = 0; i < elements; ++i) {
    const unsigned char* e = data + i * elementBytes;
    nonzero += std::any_of(e, e + elementBytes, [](unsigned char b) { return b != 0; }) ? 1 : 0;
  }
  return nonzero;
}

spcclResult_t agreedDensity(InterposedComm* comm, const CollCall& call, double* density) {
  const size_t elementBytes = elementSize(call.datatype);
  const SamplePlan plan = planSample(call.count, elementBytes);
  const size_t runBytes = plan.chunkElements * elementBytes;
  std::vector<unsigned char> sample(plan.chunks * runBytes);
  const auto* send = static_cast<const unsigned char*>(call.sendbuff);
  std::string error;
  bool copied = true;
  for (size_t k = 0; k < plan.chunks && copied; ++k)
    copied =
        copyOnStream(sample.data() + k * runBytes, send + k * plan.strideElements * elementBytes,
                     runBytes, call.stream, &error);
  copied = copied && finishStreamWork(call.stream, &error);
  if (!copied)
    SPCCL_WARN("NCCL interposer: %s: sampling the device buffer for its density: %s", call.name,
               error.c_str());
  // {nonzero, sampled, ranks that could not sample}, summed over the
  // ranks: every rank ends with the same three numbers.
  const size_t sampled = plan.chunks * plan.chunkElements;
  uint64_t counts[3] = {copied ? countNonzero(sample.data(), sampled, elementBytes) : 0, sampled,
                        copied ? 0U : 1U};
  const spcclResult_t r =
      spcclAllReduce(counts, counts, 3, spcclUint64, spcclSum, comm->spccl, nullptr);
  if (r != spcclSuccess) return r;
  *density = counts[2] > 0 || counts[1] == 0
                 ? 1.0
                 : static_cast<double>(counts[0]) / static_cast<double>(counts[1]);
  return spcclSuccess;
}

}  // namespace spccl::nccl
