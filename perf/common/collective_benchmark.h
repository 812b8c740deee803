// Times and checks one collective at one size, out of place and in place,
// the way nccl-tests' BenchTime does: one untimed call, -n timed calls,
// then (with -c 1) one call on fresh reference inputs that is checked.
#pragma once

#include <memory>
#include <vector>

#include "common/collective_spec.h"
#include "common/device_memory.h"
#include "common/element_codec.h"
#include "common/perf_options.h"
#include "common/perf_result.h"
#include "common/perf_session.h"

namespace spccl::perf {

class CollectiveBenchmark {
 public:
  // Allocates host buffers for the largest size of options, and with
  // --device the device buffers they mirror.
  CollectiveBenchmark(const CollectiveSpec& spec, const PerfOptions& options,
                      const PerfSession& session);
  ~CollectiveBenchmark();
  CollectiveBenchmark(const CollectiveBenchmark&) = delete;
  CollectiveBenchmark& operator=(const CollectiveBenchmark&) = delete;

  // -w untimed calls, out of place.
  void warmUp(size_t bytes, spcclDataType_t type, spcclRedOp_t op);
  SizeResult measure(size_t bytes, spcclDataType_t type, spcclRedOp_t op);

 private:
  struct Buffers {
    void* send;
    void* recv;
  };

  BufferLayout layoutFor(size_t bytes, spcclDataType_t type) const;
  // The buffers the calls use (device ones with --device) and the host
  // ones the checks read and write (the same without --device).
  Buffers buffersFor(const BufferLayout& layout, spcclDataType_t type, bool inPlace);
  Buffers hostBuffersFor(const BufferLayout& layout, spcclDataType_t type, bool inPlace);
  // --device: the host buffers' contents to the device, and back.
  void upload();
  void downloadResults();
  CollectiveCall callFor(const Buffers& buffers, const BufferLayout& layout, spcclDataType_t type,
                         spcclRedOp_t op) const;
  void run(const CollectiveCall& call) const;
  ModeResult measureMode(const BufferLayout& layout, size_t bytes, spcclDataType_t type,
                         spcclRedOp_t op, bool inPlace);
  // host: the host buffers of the call (with --device, mirrored).
  int64_t checkedWrongElements(const CollectiveCall& call, const Buffers& host,
                               const ElementCodec& codec, const CheckContext& context);

  const CollectiveSpec& spec_;
  const PerfOptions& options_;
  const PerfSession& session_;
  int root_;  // -r for rooted collectives, else -1 (what the table shows)
  std::vector<unsigned char> sendBuffer_;
  std::vector<unsigned char> recvBuffer_;
  DeviceMemory* device_ = nullptr;  // --device only: the session's
  void* deviceSend_ = nullptr;
  void* deviceRecv_ = nullptr;
};

}  // namespace spccl::perf
