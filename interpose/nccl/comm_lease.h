// Who is using an interposed communicator right now. Every entry point
// that works on a communicator holds a lease for the whole call, so that
// ncclCommAbort (or ncclCommDestroy) from another thread neither frees the
// wrapper under it (the lease shares ownership) nor frees the spccl
// communicator while the call may still touch it (the destroy waits, within
// a deadline, until the leases are returned: comm_lifecycle.cc).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace spccl::nccl {

struct InterposedComm;

// The calls in flight on one communicator, and whether it still takes new
// ones.
class InFlightCalls {
 public:
  // False once closed: the communicator is being destroyed.
  bool enter();
  void leave();
  // No call enters after this. Returns how many are in flight.
  int close();
  bool closed();
  // Waits until every call has left; false if some are still inside at
  // the deadline.
  bool waitUntilIdle(std::chrono::milliseconds timeout);

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int inside_ = 0;
  bool closed_ = false;
};

// One call's use of a communicator: shared ownership plus a place among
// its calls in flight. Empty when the communicator is unknown or closing.
class CommLease {
 public:
  CommLease() = default;
  // Empty when comm is null or already closed.
  explicit CommLease(std::shared_ptr<InterposedComm> comm);
  ~CommLease();
  CommLease(CommLease&& other) noexcept = default;
  CommLease& operator=(CommLease&& other) noexcept;
  CommLease(const CommLease&) = delete;
  CommLease& operator=(const CommLease&) = delete;

  InterposedComm* get() const { return comm_.get(); }
  InterposedComm* operator->() const { return comm_.get(); }
  explicit operator bool() const { return comm_ != nullptr; }
  const std::shared_ptr<InterposedComm>& shared() const { return comm_; }

 private:
  void release();
  std::shared_ptr<InterposedComm> comm_;
};

}  // namespace spccl::nccl
