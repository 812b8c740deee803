#include "coll/relay.h"

#include "base/check.h"

namespace spccl {

spcclResult_t SendWindow::post(int peer, const void* data, size_t bytes) {
  InFlight& entry = inFlight_.emplace_back();
  entry.data = bytePointer(data);
  entry.bytes = bytes;
  return ctx_.isend(peer, data, bytes, &entry.request);
}

spcclResult_t SendWindow::waitOldest() {
  SPCCL_CHECK(ctx_.wait(&inFlight_.front().request));
  inFlight_.pop_front();
  return spcclSuccess;
}

spcclResult_t SendWindow::release(const void* data, size_t bytes) {
  const char* begin = bytePointer(data);
  const char* end = begin + bytes;
  // Sends complete in order on a link, so waiting up to the newest
  // overlapping one costs nothing extra.
  size_t mustWait = 0;
  for (size_t i = 0; i < inFlight_.size(); ++i) {
    const InFlight& entry = inFlight_[i];
    if (entry.data < end && begin < entry.data + entry.bytes) mustWait = i + 1;
  }
  for (size_t i = 0; i < mustWait; ++i) SPCCL_CHECK(waitOldest());
  return spcclSuccess;
}

spcclResult_t SendWindow::drain() {
  while (!inFlight_.empty()) SPCCL_CHECK(waitOldest());
  return spcclSuccess;
}

namespace {

spcclResult_t postArrival(CollContext& ctx, SendWindow& window, int upstream,
                          const RelayArrival& arrival, size_t elementSize, PeerRequest* request) {
  size_t bytes = arrival.count * elementSize;
  SPCCL_CHECK(window.release(arrival.landing, bytes));
  return ctx.irecv(upstream, arrival.landing, bytes, request);
}

}  // namespace

spcclResult_t runRelay(CollContext& ctx, RelayPlan& plan, int upstream, int downstream,
                       size_t elementSize, kernels::ReduceFn reduce, const char* schedule) {
  SendWindow window(ctx);
  RelayArrival current, next;
  PeerRequest currentRequest, nextRequest;
  bool haveCurrent = plan.nextArrival(&current);
  // The first receive goes up before any send, keeping the invariant in
  // relay.h even while the initial sends fill the window.
  if (haveCurrent)
    SPCCL_CHECK(postArrival(ctx, window, upstream, current, elementSize, &currentRequest));

  const void* initialData = nullptr;
  size_t initialCount = 0;
  while (plan.nextInitialSend(&initialData, &initialCount))
    SPCCL_CHECK(window.post(downstream, initialData, initialCount * elementSize));

  while (haveCurrent) {
    bool haveNext = plan.nextArrival(&next);
    // Normally the next receive is posted before this one is waited on;
    // if it would land on memory this arrival still uses, only afterwards.
    bool postNextLate = haveNext && arrivalsConflict(next, current, elementSize);
    if (haveNext && !postNextLate)
      SPCCL_CHECK(postArrival(ctx, window, upstream, next, elementSize, &nextRequest));

    size_t bytes = current.count * elementSize;
    size_t received = 0;
    SPCCL_CHECK(ctx.wait(&currentRequest, &received));
    SPCCL_CHECK(checkReceivedBytes(ctx, upstream, received, bytes, schedule));
    if (current.reduceInto != nullptr) {
      SPCCL_CHECK(window.release(current.reduceInto, bytes));
      reduce(current.reduceInto, current.first, current.second, current.count);
    }
    if (current.forward != nullptr) SPCCL_CHECK(window.post(downstream, current.forward, bytes));
    if (postNextLate)
      SPCCL_CHECK(postArrival(ctx, window, upstream, next, elementSize, &nextRequest));

    current = next;
    currentRequest = nextRequest;
    haveCurrent = haveNext;
  }
  return window.drain();
}

}  // namespace spccl
