// Monotonic time and deadlines: every wait in spccl has one.
#pragma once

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

class Deadline {
 public:
  explicit Deadline(int64_t timeoutMs)
      : expiresAtMs_(monotonicMs() + timeoutMs), timeoutMs_(timeoutMs) {}
  bool expired() const { return monotonicMs() >= expiresAtMs_; }
  // Milliseconds left, never negative.
  int64_t remainingMs() const {
    int64_t left = expiresAtMs_ - monotonicMs();
    return left > 0 ? left : 0;
  }
  int64_t timeoutMs() const { return timeoutMs_; }

 private:
  int64_t expiresAtMs_;
  int64_t timeoutMs_;
};

}  // namespace spccl
