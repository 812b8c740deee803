// Times and checks the sparse all-reduce at one size against the dense
// all-reduce of the same inputs: -w+1 untimed calls of each (the planner
// profiles density on its first calls for a tag, docs/algorithms.md 2), -n
// timed calls of each, then (-c 1) one more of each on the same inputs,
// compared element by element, and a hash of the result compared across
// ranks.
#pragma once

#include <memory>
#include <vector>

#include "common/device_memory.h"
#include "common/perf_options.h"
#include "common/perf_session.h"
#include "common/sparse_options.h"
#include "common/sparse_result.h"

namespace spccl::perf {

class SparseBenchmark {
 public:
  SparseBenchmark(const PerfOptions& options, const SparseOptions& sparseOptions,
                  const PerfSession& session);
  ~SparseBenchmark();
  SparseBenchmark(const SparseBenchmark&) = delete;
  SparseBenchmark& operator=(const SparseBenchmark&) = delete;

  SparseSizeResult measure(const SparseInput& input, spcclRedOp_t op);

 private:
  void sparseAllReduce(const SparseInput& input, spcclRedOp_t op, uint64_t tag, void* result);
  void prepareCoo(const SparseInput& input);
  void densifyCooResult(const SparseInput& input, void* result) const;
  void denseAllReduce(const SparseInput& input, spcclRedOp_t op, void* result) const;
  void readStats(uint64_t tag, SparseSizeResult* row) const;
  void describeInputs(const SparseInput& input, SparseSizeResult* row) const;
  void check(const SparseInput& input, spcclRedOp_t op, uint64_t tag, SparseSizeResult* row);
  int64_t divergentRanks(const std::vector<unsigned char>& result) const;
  // --device: the input on the device, the calls' result there, the stream.
  const void* callInput(const SparseInput& input) const;
  void* callResult(void* host) const;
  void settle() const;
  void fetchResult(void* host) const;

  const PerfOptions& options_;
  const SparseOptions& sparseOptions_;
  const PerfSession& session_;
  std::vector<unsigned char> result_;
  std::vector<unsigned char> reference_;
  // --coo: the input's non-zeros and the output arrays (capacity: the sum
  // of all ranks' non-zeros, which bounds the result).
  struct CooBuffers {
    std::vector<uint64_t> indices;
    std::vector<unsigned char> values;
    size_t nnz = 0;
  };
  CooBuffers cooInput_, cooOutput_;
  DeviceMemory* device_ = nullptr;  // --device only (dense-form calls): the session's
  void* deviceInput_ = nullptr;
  void* deviceResult_ = nullptr;
  size_t deviceBytes_ = 0;
};

}  // namespace spccl::perf
