// How an API call reaches its buffers and in which order it runs:
// - host memory, no stream: at once, as always;
// - device memory, no stream: copied to pinned host memory, run, copied
//   back, before the call returns;
// - a stream (cudaStream_t): enqueued in the stream's order, NCCL's way.
//   The call returns at once. On the stream: the copies in, then a host
//   function that hands the call to the communicator's worker and holds
//   the stream until the call ran, then the copies out. The worker runs
//   calls in issue order, so every rank runs the same sequence. A failure
//   after the return becomes the communicator's async error
//   (spcclCommGetAsyncError), and every later call returns it.
//
// Bodies run later than the call (on the worker): they capture by value
// and use hostView's pointers, never the user's.
#pragma once

#include <functional>
#include <memory>

#include "coll/dense_pieces.h"
#include "core/piece_gates.h"
#include "device/staging.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl {

class StagedCall {
 public:
  StagedCall(spcclComm_t comm, const char* call, void* stream);

  void add(const char* name, const void* pointer, size_t bytes, device::Access access) {
    staging_->add(name, pointer, bytes, access);
  }
  spcclResult_t requireSameKind(const char* first, const char* second) const {
    return staging_->requireSameKind(call_, first, second);
  }
  // After the last add: whether the call can be staged (a stream needs
  // the driver, device buffers a CUDA context), without taking buffers:
  // for calls that run later, staged again with their group.
  spcclResult_t validate();
  // After the last add, before hostView: validate, then take the pinned
  // buffers.
  spcclResult_t prepare();
  void* hostView(const void* pointer) const { return staging_->hostView(pointer); }

  // A blocking API call: at once, or enqueued on the stream. Not
  // finishCall'ed: the caller does.
  spcclResult_t run(std::function<spcclResult_t()> body);
  // A call that reaches device buffers itself (core/device_collective_call.h):
  // nothing staged or copied. At once (a NULL stream: after the legacy
  // stream's earlier work), or in the stream's order like run; body runs
  // with the buffers' CUDA context current.
  spcclResult_t runDirect(std::function<spcclResult_t()> body);
  // The same for a non-blocking API call: the legacy stream's earlier work
  // is waited for now, body runs queued (runQueued) and reads the buffers
  // then, as a non-blocking call on host buffers does.
  spcclResult_t runDirectQueued(std::function<spcclResult_t()> body, spcclRequest_t* request);
  bool hasDeviceMemory() const { return staging_->hasDeviceMemory(); }
  // The device of the first device buffer; -1 without one.
  int device() const { return staging_->device(); }
  // Enqueued on a stream (runDirect then runs in its order), not at once.
  bool hasStream() const { return stream_ != nullptr; }
  // The buffers' CUDA context (after validate); nullptr for host buffers.
  device::CuContext context() const { return context_; }

  // A non-blocking API call (no stream): the request completes when the
  // results are in the user's buffers.
  spcclResult_t runQueued(std::function<spcclResult_t()> body, spcclRequest_t* request);

  // The same for a collective: body runs on a fresh context for
  // `signature` (runtime/coll_context.h, runCollective).
  spcclResult_t runCollective(const CollSignature& signature,
                              std::function<spcclResult_t(CollContext&)> body);
  // A blocking collective cut into `pieces` (coll/dense_pieces.h). body
  // runs the pieces in order on one context; where gates is not nullptr it
  // waits for each piece's input (awaitInput) and says when each ran
  // (pieceRan). That is where this rank has device buffers: they are then
  // copied piece by piece (rangesOf) in the stream's order, the NULL
  // stream's for a call without one, and the copies overlap the pieces
  // (core/piece_gates.h). Otherwise as runCollective.
  spcclResult_t runCollectiveInPieces(const CollSignature& signature, size_t pieces,
                                      const std::function<PieceRanges(size_t)>& rangesOf,
                                      std::function<spcclResult_t(CollContext&, PieceGates*)> body);
  spcclResult_t runCollectiveQueued(const CollSignature& signature,
                                    std::function<spcclResult_t(CollContext&)> body,
                                    spcclRequest_t* request);
  // runCollective where request is NULL (a blocking call), else
  // runCollectiveQueued: the API calls whose two forms share one path.
  spcclResult_t runCollectiveOrQueue(const CollSignature& signature,
                                     std::function<spcclResult_t(CollContext&)> body,
                                     spcclRequest_t* request);

 private:
  spcclResult_t runOnStream(std::function<spcclResult_t()> body);
  // Device buffers and no stream: waits for the legacy stream's work.
  spcclResult_t awaitLegacyStream();
  // On the call's stream (or the NULL stream): every piece's copies in,
  // each followed by gates->inputStaged; then per piece a hold and its
  // copies out; then the pinned buffers' release.
  spcclResult_t enqueuePieceCopies(size_t pieces,
                                   const std::function<PieceRanges(size_t)>& rangesOf,
                                   const std::shared_ptr<PieceGates>& gates) const;

  spcclComm_t comm_;
  const char* call_;
  device::CuStream stream_;
  device::CuContext context_ = nullptr;  // the caller's, for copies on the worker
  bool direct_ = false;                  // runDirect: the stream holds no copies
  std::shared_ptr<device::StagingSet> staging_;
};

// "<call>: the communicator failed in an earlier call enqueued on a stream:
// <why>" with that failure's code, once comm has an async error.
spcclResult_t checkNoAsyncError(const char* call, spcclComm_t comm);

// The first failure of a stream-ordered call on comm; spcclSuccess if none.
spcclResult_t asyncErrorOf(spcclComm_t comm);

}  // namespace spccl
