// The reduce-scatter, all-gather, broadcast and reduce of the
// device-resident tests (test_device_collectives.cc, test_device_group.cc):
// one call's shape and buffer sizes, the API call of that shape, its CPU
// reference on host buffers in the same job, its device buffers; and for
// every collective's tests (the all-to-all's too), what the emulation's
// counters saw a call do.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "device_values.h"
#include "spccl.h"

namespace spccl::testing {

enum class Coll { ReduceScatter, AllGather, Broadcast, Reduce };
constexpr Coll kColls[] = {Coll::ReduceScatter, Coll::AllGather, Coll::Broadcast, Coll::Reduce};

inline const char* nameOf(Coll coll) {
  switch (coll) {
    case Coll::ReduceScatter:
      return "reduce-scatter";
    case Coll::AllGather:
      return "all-gather";
    case Coll::Broadcast:
      return "broadcast";
    default:
      return "reduce";
  }
}

inline bool reduces(Coll coll) { return coll == Coll::ReduceScatter || coll == Coll::Reduce; }

// One call: `count` is the API's (per rank for reduce-scatter and
// all-gather); the root is the last rank, so that it is not rank 0.
struct Shape {
  Coll coll;
  spcclDataType_t type;
  spcclRedOp_t op;
  size_t count;
  int rank, nranks;
  int root() const { return nranks - 1; }
  size_t size() const { return spcclTypeSize(type); }
  size_t n() const { return static_cast<size_t>(nranks); }
  // This rank's input (inputOf), empty where it passes no sendbuff.
  std::vector<unsigned char> input() const { return inputOf(rank, type, sendBytes() / size()); }
  // Bytes of this rank's buffers (0: it passes none).
  size_t sendBytes() const {
    if (coll == Coll::ReduceScatter) return count * size() * n();
    if (coll == Coll::Broadcast && rank != root()) return 0;
    return count * size();
  }
  size_t recvBytes() const {
    if (coll == Coll::AllGather) return count * size() * n();
    if (coll == Coll::Reduce && rank != root()) return 0;
    return count * size();
  }
  // Where the input sits in the buffer of an in-place call (NCCL's rule:
  // the all-gather's sendbuff is the rank's slot of recvbuff; the
  // reduce-scatter's recvbuff is the rank's block of sendbuff).
  size_t inPlaceOffset() const {
    return coll == Coll::ReduceScatter || coll == Coll::AllGather
               ? static_cast<size_t>(rank) * count * size()
               : 0;
  }
  std::string describe(bool inPlace, void* stream) const {
    return std::string(nameOf(coll)) + " type " + std::to_string(type) + " op " +
           std::to_string(op) + " count " + std::to_string(count) + " on " +
           std::to_string(nranks) + " ranks" + (inPlace ? ", in place" : ", out of place") +
           (stream != nullptr ? ", on a stream" : ", NULL stream");
  }
};

// The API call of shape s on `stream`; with a request, its non-blocking
// spcclI* form instead (no stream).
inline spcclResult_t callOn(const Shape& s, const void* send, void* recv, spcclComm_t comm,
                            void* stream, spcclRequest_t* request = nullptr) {
  const bool async = request != nullptr;
  switch (s.coll) {
    case Coll::ReduceScatter:
      return async ? spcclIreduceScatter(send, recv, s.count, s.type, s.op, comm, request)
                   : spcclReduceScatter(send, recv, s.count, s.type, s.op, comm, stream);
    case Coll::AllGather:
      return async ? spcclIallGather(send, recv, s.count, s.type, comm, request)
                   : spcclAllGather(send, recv, s.count, s.type, comm, stream);
    case Coll::Broadcast:
      return async ? spcclIbroadcast(send, recv, s.count, s.type, s.root(), comm, request)
                   : spcclBroadcast(send, recv, s.count, s.type, s.root(), comm, stream);
    default:
      return async ? spcclIreduce(send, recv, s.count, s.type, s.op, s.root(), comm, request)
                   : spcclReduce(send, recv, s.count, s.type, s.op, s.root(), comm, stream);
  }
}

// The CPU collective of every rank's input, on host buffers (the
// receive buffer of a rank that passes none is empty).
inline std::vector<unsigned char> reference(const Shape& s, spcclComm_t comm) {
  std::vector<unsigned char> in = s.input();
  std::vector<unsigned char> out(s.recvBytes());
  EXPECT_EQ(callOn(s, in.empty() ? nullptr : in.data(), out.empty() ? nullptr : out.data(), comm,
                   nullptr),
            spcclSuccess)
      << spcclGetLastError(comm);
  return out;
}

// A call that fell back on this rank: nothing ran on a device.
inline void expectFallback(const Seen& seen, const std::string& what) {
  EXPECT_EQ(seen.launches, 0u) << what << ": a kernel ran (the call did not fall back)";
  EXPECT_EQ(seen.copiesOnDevice, 0u) << what << ": a device copy ran (the call did not fall back)";
}

// A call that took a path of device-to-device copies only (the
// all-to-all's): `copies` of them, no kernel, nothing through the host.
inline void expectCopiesOnDevice(const Seen& seen, uint64_t copies, const std::string& what) {
  EXPECT_EQ(seen.hostCopies, 0u) << what << ": copies through the host (staged or fallen back)";
  EXPECT_EQ(seen.launches, 0u) << what << ": a kernel ran";
  EXPECT_EQ(seen.copiesOnDevice, copies) << what;
}

// A call's device buffers on this rank, the input in place: out of place
// a send and a receive buffer (none where the rank passes none); in place
// one buffer, the larger of the two, the input at its place.
class ShapeBuffers {
 public:
  ShapeBuffers(const Shape& s, bool inPlace)
      : shape_(s),
        inPlace_(inPlace),
        first_(std::max(s.sendBytes(), s.recvBytes())),
        second_(s.recvBytes()) {
    const std::vector<unsigned char> input = s.input();
    if (inPlace) {
      const bool sendIsWhole = s.coll == Coll::ReduceScatter;
      first_.set(input, sendIsWhole ? 0 : s.inPlaceOffset());
      send_ = sendIsWhole ? first_.data() : first_.at(s.inPlaceOffset());
      recv_ = sendIsWhole ? first_.at(s.inPlaceOffset()) : first_.data();
    } else {
      if (!input.empty()) first_.set(input);
      send_ = s.sendBytes() > 0 ? first_.data() : nullptr;
      recv_ = s.recvBytes() > 0 ? second_.data() : nullptr;
    }
  }
  const void* send() const { return send_; }
  void* recv() const { return recv_; }
  // The received bytes once the stream's work is done (as reference()
  // returns them; empty where the rank passes no receive buffer).
  std::vector<unsigned char> result(void* stream) const {
    if (shape_.recvBytes() == 0) return {};
    std::vector<unsigned char> got = inPlace_ ? first_.get(stream) : second_.get(stream);
    if (inPlace_ && shape_.coll == Coll::ReduceScatter)
      got = std::vector<unsigned char>(
          got.begin() + static_cast<long>(shape_.inPlaceOffset()),
          got.begin() + static_cast<long>(shape_.inPlaceOffset() + shape_.recvBytes()));
    return got;
  }

 private:
  Shape shape_;
  bool inPlace_;
  DeviceBytes first_, second_;
  const void* send_ = nullptr;
  void* recv_ = nullptr;
};

}  // namespace spccl::testing
