#include "core/staged_call.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "core/comm.h"
#include "device/host_function.h"

namespace spccl {

namespace {

// The meeting point of a stream-ordered call's host function (on CUDA's
// thread) and its run on the communicator's worker.
struct StreamTicket {
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  std::condition_variable cv;
  bool reached = false;  // the stream reached the call: its inputs are staged
  bool done = false;     // the call ran (or never will): the stream may go on
  bool ran = false;      // ... and it ran, successfully (for the staging report)
  Clock::time_point enqueuedAt = Clock::now(), reachedAt, doneAt;

  // The host function: the stream waits here until the call ran.
  void reachAndHold() {
    std::unique_lock<std::mutex> lock(mutex);
    reached = true;
    reachedAt = Clock::now();
    cv.notify_all();
    cv.wait(lock, [this] { return done; });
  }
  bool waitReached(int64_t timeoutMs) {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, std::chrono::milliseconds(timeoutMs), [this] { return reached; });
  }
  void finish(bool succeeded = false) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!done) {
      ran = succeeded;
      doneAt = Clock::now();
    }
    done = true;
    cv.notify_all();
  }
  // The last host function, after the copies out: the call's split, for
  // SPCCL_STAGING_REPORT. Its "copies in" is from the enqueue to the
  // stream reaching the call, so it includes the work queued before it.
  void recordSplit(StagingProfile& profile, size_t bytesIn, size_t bytesOut) {
    const Clock::time_point copiedOut = Clock::now();
    std::lock_guard<std::mutex> lock(mutex);
    if (!ran) return;
    auto seconds = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    profile.recordSplit(seconds(enqueuedAt, reachedAt), seconds(reachedAt, doneAt),
                        seconds(doneAt, copiedOut), bytesIn, bytesOut);
  }
};

// Releases the stream when the worker's job is dropped unrun (an abort
// clears the queue): the last copy of the job going away finishes it.
class TicketRelease {
 public:
  explicit TicketRelease(std::shared_ptr<StreamTicket> ticket) : ticket_(std::move(ticket)) {}
  ~TicketRelease() { ticket_->finish(); }
  TicketRelease(const TicketRelease&) = delete;
  TicketRelease& operator=(const TicketRelease&) = delete;

 private:
  std::shared_ptr<StreamTicket> ticket_;
};

// Lets every hold on the stream go on once the last copy of the call's
// job is gone: run, failed, or dropped unrun by an abort.
class GatesRelease {
 public:
  explicit GatesRelease(std::shared_ptr<PieceGates> gates) : gates_(std::move(gates)) {}
  ~GatesRelease() { gates_->releaseAll(); }
  GatesRelease(const GatesRelease&) = delete;
  GatesRelease& operator=(const GatesRelease&) = delete;
  PieceGates* gates() const { return gates_.get(); }

 private:
  std::shared_ptr<PieceGates> gates_;
};

void recordAsyncError(spcclComm_t comm, spcclResult_t result, const std::string& why) {
  std::lock_guard<std::mutex> lock(comm->asyncMutex);
  if (comm->asyncError != spcclSuccess) return;
  comm->asyncError = result;
  comm->asyncErrorText = why;
}

}  // namespace

StagedCall::StagedCall(spcclComm_t comm, const char* call, void* stream)
    : comm_(comm), call_(call), stream_(stream), staging_(std::make_shared<device::StagingSet>()) {}

spcclResult_t StagedCall::validate() {
  if (stream_ != nullptr && device::cudaDriver() == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: stream is not NULL, but this process has not loaded the CUDA driver: "
                      "a stream must be a cudaStream_t",
                      call_);
  if (!staging_->hasDeviceMemory()) return spcclSuccess;
  const device::CudaDriver* d = device::cudaDriver();
  if (d->ctxGetCurrent(&context_) != 0) context_ = nullptr;
  if (context_ == nullptr && stream_ != nullptr && d->streamGetCtx(stream_, &context_) != 0)
    context_ = nullptr;
  if (context_ == nullptr)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "%s: device buffers, but no CUDA context is current on this thread "
                      "(call cudaSetDevice first)",
                      call_);
  return spcclSuccess;
}

spcclResult_t StagedCall::prepare() {
  SPCCL_CHECK(validate());
  if (!staging_->hasDeviceMemory()) return spcclSuccess;
  device::ScopedCudaContext current(context_);
  return staging_->allocate();
}

spcclResult_t StagedCall::run(std::function<spcclResult_t()> body) {
  if (stream_ != nullptr) return runOnStream(std::move(body));
  if (!staging_->hasDeviceMemory()) return runBlocking(comm_, body);
  device::ScopedCudaContext current(context_);
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  const Clock::time_point start = Clock::now();
  SPCCL_CHECK(staging_->copyIn(nullptr));
  const double copyIn = since(start);
  const Clock::time_point ran = Clock::now();
  SPCCL_CHECK(runBlocking(comm_, body));
  const double onHost = since(ran);
  const Clock::time_point out = Clock::now();
  SPCCL_CHECK(staging_->copyOut(nullptr));
  comm_->stagingProfile->recordSplit(copyIn, onHost, since(out),
                                     staging_->bytesToCopy(device::Access::Read),
                                     staging_->bytesToCopy(device::Access::Write));
  return spcclSuccess;
}

spcclResult_t StagedCall::runDirect(std::function<spcclResult_t()> body) {
  direct_ = true;
  auto inContext = [context = context_, body = std::move(body)] {
    device::ScopedCudaContext current(context);
    return body();
  };
  if (stream_ != nullptr) return runOnStream(std::move(inContext));
  SPCCL_CHECK(awaitLegacyStream());
  return runBlocking(comm_, inContext);
}

spcclResult_t StagedCall::runDirectQueued(std::function<spcclResult_t()> body,
                                          spcclRequest_t* request) {
  direct_ = true;
  SPCCL_CHECK(awaitLegacyStream());
  return runAsync(
      comm_,
      [context = context_, body = std::move(body)] {
        device::ScopedCudaContext current(context);
        return body();
      },
      request);
}

spcclResult_t StagedCall::awaitLegacyStream() {
  if (!staging_->hasDeviceMemory()) return spcclSuccess;
  // NCCL's NULL stream is the legacy one: the call comes after its work.
  device::ScopedCudaContext current(context_);
  const device::CuResult synced = device::cudaDriver()->streamSynchronize(nullptr);
  if (synced != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: waiting for the work queued before the call: %s",
                      call_, device::describeCuError("cuStreamSynchronize", synced).c_str());
  return spcclSuccess;
}

spcclResult_t StagedCall::runQueued(std::function<spcclResult_t()> body, spcclRequest_t* request) {
  if (!staging_->hasDeviceMemory()) return runAsync(comm_, std::move(body), request);
  {
    device::ScopedCudaContext current(context_);
    SPCCL_CHECK(staging_->copyIn(nullptr));
  }
  return runAsync(
      comm_,
      [staging = staging_, context = context_, body = std::move(body)]() -> spcclResult_t {
        SPCCL_CHECK(body());
        device::ScopedCudaContext current(context);
        return staging->copyOut(nullptr);
      },
      request);
}

spcclResult_t StagedCall::runCollective(const CollSignature& signature,
                                        std::function<spcclResult_t(CollContext&)> body) {
  spcclComm_t comm = comm_;
  return run([comm, signature, body = std::move(body)] {
    return spccl::runCollective(*comm->engine, signature, body);
  });
}

spcclResult_t StagedCall::runCollectiveQueued(const CollSignature& signature,
                                              std::function<spcclResult_t(CollContext&)> body,
                                              spcclRequest_t* request) {
  spcclComm_t comm = comm_;
  return runQueued(
      [comm, signature, body = std::move(body)] {
        return spccl::runCollective(*comm->engine, signature, body);
      },
      request);
}

spcclResult_t StagedCall::runCollectiveOrQueue(const CollSignature& signature,
                                               std::function<spcclResult_t(CollContext&)> body,
                                               spcclRequest_t* request) {
  return request != nullptr ? runCollectiveQueued(signature, std::move(body), request)
                            : runCollective(signature, std::move(body));
}

spcclResult_t StagedCall::enqueuePieceCopies(size_t pieces,
                                             const std::function<PieceRanges(size_t)>& rangesOf,
                                             const std::shared_ptr<PieceGates>& gates) const {
  std::vector<PieceRanges> ranges;
  ranges.reserve(pieces);
  for (size_t k = 0; k < pieces; ++k) ranges.push_back(rangesOf(k));
  for (size_t k = 0; k < pieces; ++k) {
    for (const device::StagedRange& range : ranges[k].reads)
      SPCCL_CHECK(staging_->copyRangeIn(stream_, range));
    SPCCL_CHECK(device::enqueueHostFunction(
        stream_, [gates, k] { gates->inputStaged(k); }, call_));
  }
  for (size_t k = 0; k < pieces; ++k) {
    SPCCL_CHECK(device::enqueueHostFunction(
        stream_, [gates, k] { gates->holdForOutput(k); }, call_));
    for (const device::StagedRange& range : ranges[k].writes)
      SPCCL_CHECK(staging_->copyRangeOut(stream_, range));
  }
  return device::enqueueHostFunction(
      stream_, [staging = staging_] {}, call_);
}

spcclResult_t StagedCall::runCollectiveInPieces(
    const CollSignature& signature, size_t pieces,
    const std::function<PieceRanges(size_t)>& rangesOf,
    std::function<spcclResult_t(CollContext&, PieceGates*)> body) {
  spcclComm_t comm = comm_;
  auto collective = [comm, signature, body = std::move(body)](PieceGates* gates) {
    return spccl::runCollective(*comm->engine, signature,
                                [&](CollContext& ctx) { return body(ctx, gates); });
  };
  if (pieces <= 1 || !staging_->hasDeviceMemory())
    return run([collective] { return collective(nullptr); });
  if (stream_ != nullptr) SPCCL_CHECK(checkNoAsyncError(call_, comm_));
  comm_->stagingProfile->recordOverlapped();
  device::ScopedCudaContext current(context_);
  auto gates = std::make_shared<PieceGates>();
  // Made in place, like runOnStream's TicketRelease: from here every path
  // releases the holds, the worker's included.
  auto release = std::make_shared<GatesRelease>(gates);
  if (const spcclResult_t enqueued = enqueuePieceCopies(pieces, rangesOf, gates);
      enqueued != spcclSuccess) {
    release.reset();
    device::cudaDriver()->streamSynchronize(stream_);  // before the pinned buffers go back
    return enqueued;
  }
  if (stream_ == nullptr) {
    // The NULL stream holds until the pieces ran, then copies out; the
    // call returns when that is done.
    const spcclResult_t result = runBlocking(comm_, [&] { return collective(gates.get()); });
    release.reset();
    const device::CuResult synced = device::cudaDriver()->streamSynchronize(nullptr);
    if (result != spcclSuccess) return result;
    if (synced != 0)
      return SPCCL_FAIL(spcclSystemError, "%s: copying the results to the device: %s", call_,
                        device::describeCuError("cuStreamSynchronize", synced).c_str());
    return spcclSuccess;
  }
  return runAsync(
      comm,
      [comm, release, collective = std::move(collective)]() -> spcclResult_t {
        const spcclResult_t result = collective(release->gates());
        // Recorded before the stream goes on (as in runOnStream).
        if (result != spcclSuccess) recordAsyncError(comm, result, threadLastError());
        release->gates()->releaseAll();
        return result;
      },
      nullptr);
}

spcclResult_t StagedCall::runOnStream(std::function<spcclResult_t()> body) {
  SPCCL_CHECK(checkNoAsyncError(call_, comm_));
  device::ScopedCudaContext current(context_);
  if (const spcclResult_t copied = direct_ ? spcclSuccess : staging_->copyIn(stream_);
      copied != spcclSuccess) {
    device::cudaDriver()->streamSynchronize(stream_);  // copies already queued finish first
    return copied;
  }
  auto ticket = std::make_shared<StreamTicket>();
  // Made in place: a temporary's destructor would finish the ticket now.
  auto release = std::make_shared<TicketRelease>(ticket);
  // A failure from here on: the stream is released and drained before the
  // pinned buffers its copies use go back to the pool.
  const auto abandon = [&](spcclResult_t failure) {
    release.reset();
    device::cudaDriver()->streamSynchronize(stream_);
    return failure;
  };
  spcclResult_t enqueued = device::enqueueHostFunction(
      stream_, [ticket] { ticket->reachAndHold(); }, call_);
  // From here the stream waits for the ticket: `release` finishes it on
  // every path, the worker's included.
  if (enqueued == spcclSuccess && !direct_) enqueued = staging_->copyOut(stream_);
  // The pinned buffers go back to the pool once the copies out are done;
  // the call's time split is known then.
  if (enqueued == spcclSuccess && !direct_)
    enqueued = device::enqueueHostFunction(
        stream_,
        [staging = staging_, ticket, profile = comm_->stagingProfile] {
          ticket->recordSplit(*profile, staging->bytesToCopy(device::Access::Read),
                              staging->bytesToCopy(device::Access::Write));
        },
        call_);
  if (enqueued != spcclSuccess) return abandon(enqueued);
  const int timeoutMs = comm_->options.timeoutMs;
  spcclComm_t comm = comm_;
  std::string name = call_;
  return runAsync(
      comm,
      [comm, name, timeoutMs, ticket, release, body = std::move(body)]() -> spcclResult_t {
        spcclResult_t result = spcclSuccess;
        if (!ticket->waitReached(timeoutMs))
          result = SPCCL_FAIL(spcclSystemError,
                              "%s: the stream did not reach the call within %d ms (the work "
                              "queued on it before the call is still running)",
                              name.c_str(), timeoutMs);
        else
          result = body();
        // Recorded before the stream goes on: whoever synchronises with the
        // stream, then asks spcclCommGetAsyncError, sees it.
        if (result != spcclSuccess) recordAsyncError(comm, result, threadLastError());
        ticket->finish(result == spcclSuccess);
        return result;
      },
      nullptr);
}

spcclResult_t checkNoAsyncError(const char* call, spcclComm_t comm) {
  std::lock_guard<std::mutex> lock(comm->asyncMutex);
  if (comm->asyncError == spcclSuccess) return spcclSuccess;
  return SPCCL_FAIL(comm->asyncError,
                    "%s: the communicator failed in an earlier call enqueued on a stream: %s", call,
                    comm->asyncErrorText.c_str());
}

spcclResult_t asyncErrorOf(spcclComm_t comm) {
  std::lock_guard<std::mutex> lock(comm->asyncMutex);
  return comm->asyncError;
}

}  // namespace spccl
