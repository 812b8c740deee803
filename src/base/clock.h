// Monotonic time and deadlines: every wait in spccl has one.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace spccl {

inline int64_t monotonicMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline double monotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A deadline that may also be cut short: given a cancel flag (a
// communicator's non-blocking creation, which spcclCommAbort must stop
// within a bound), it counts as expired once the flag is set, and a wait
// blocks at most kCancelSliceMs at a time (waitSliceMs) so that it sees the
// flag soon.
class Deadline {
 public:
  static constexpr int64_t kCancelSliceMs = 20;

  explicit Deadline(int64_t timeoutMs, const std::atomic<bool>* cancel = nullptr)
      : expiresAtMs_(monotonicMs() + timeoutMs), timeoutMs_(timeoutMs), cancel_(cancel) {}
  bool cancelled() const { return cancel_ != nullptr && cancel_->load(std::memory_order_acquire); }
  bool expired() const { return cancelled() || monotonicMs() >= expiresAtMs_; }
  // Milliseconds left, never negative; 0 once cancelled.
  int64_t remainingMs() const {
    if (cancelled()) return 0;
    int64_t left = expiresAtMs_ - monotonicMs();
    return left > 0 ? left : 0;
  }
  // How long one wait may block before it looks at expired() again.
  int64_t waitSliceMs() const {
    return cancel_ == nullptr ? remainingMs() : std::min(remainingMs(), kCancelSliceMs);
  }
  int64_t timeoutMs() const { return timeoutMs_; }

 private:
  int64_t expiresAtMs_;
  int64_t timeoutMs_;
  const std::atomic<bool>* cancel_;
};

}  // namespace spccl
