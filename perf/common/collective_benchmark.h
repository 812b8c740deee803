// Times and checks one collective at one size, out of place and in place,
// the way nccl-tests' BenchTime does: one untimed call, -n timed calls,
// then (with -c 1) one call on fresh reference inputs that is checked.
#pragma once

#include <vector>

#include "common/collective_spec.h"
#include "common/element_codec.h"
#include "common/perf_options.h"
#include "common/perf_result.h"
#include "common/perf_session.h"

namespace spccl::perf {

class CollectiveBenchmark {
 public:
  // Allocates host buffers for the largest size of options.
  CollectiveBenchmark(const CollectiveSpec& spec, const PerfOptions& options,
                      const PerfSession& session);

  // -w untimed calls, out of place.
  void warmUp(size_t bytes, spcclDataType_t type, spcclRedOp_t op);
  SizeResult measure(size_t bytes, spcclDataType_t type, spcclRedOp_t op);

 private:
  struct Buffers {
    void* send;
    void* recv;
  };

  BufferLayout layoutFor(size_t bytes, spcclDataType_t type) const;
  Buffers buffersFor(const BufferLayout& layout, spcclDataType_t type, bool inPlace);
  CollectiveCall callFor(const Buffers& buffers, const BufferLayout& layout, spcclDataType_t type,
                         spcclRedOp_t op) const;
  void run(const CollectiveCall& call) const;
  ModeResult measureMode(const BufferLayout& layout, size_t bytes, spcclDataType_t type,
                         spcclRedOp_t op, bool inPlace);
  int64_t checkedWrongElements(const CollectiveCall& call, const Buffers& buffers,
                               const ElementCodec& codec, const CheckContext& context) const;

  const CollectiveSpec& spec_;
  const PerfOptions& options_;
  const PerfSession& session_;
  int root_;  // -r for rooted collectives, else -1 (what the table shows)
  std::vector<unsigned char> sendBuffer_;
  std::vector<unsigned char> recvBuffer_;
};

}  // namespace spccl::perf
