#include "comm_lease.h"

#include <utility>

#include "interposed_comm.h"

namespace spccl::nccl {

bool InFlightCalls::enter() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return false;
  ++inside_;
  return true;
}

void InFlightCalls::leave() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--inside_ == 0) idle_.notify_all();
}

int InFlightCalls::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  return inside_;
}

bool InFlightCalls::closed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

bool InFlightCalls::waitUntilIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return idle_.wait_for(lock, timeout, [this] { return inside_ == 0; });
}

CommLease::CommLease(std::shared_ptr<InterposedComm> comm) {
  if (comm != nullptr && comm->calls.enter()) comm_ = std::move(comm);
}

CommLease::~CommLease() { release(); }

CommLease& CommLease::operator=(CommLease&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = std::move(other.comm_);
  }
  return *this;
}

void CommLease::release() {
  if (comm_ == nullptr) return;
  comm_->calls.leave();
  comm_.reset();
}

}  // namespace spccl::nccl
