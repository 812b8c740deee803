#include "core/piece_gates.h"

#include <algorithm>
#include <chrono>

namespace spccl {

void PieceGates::inputStaged(size_t piece) {
  std::lock_guard<std::mutex> lock(mutex_);
  staged_ = std::max(staged_, piece + 1);
  cv_.notify_all();
}

void PieceGates::holdForOutput(size_t piece) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return released_ || ran_ > piece; });
}

bool PieceGates::awaitInput(size_t piece, int64_t timeoutMs) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return staged_ > piece; });
}

void PieceGates::pieceRan(size_t piece) {
  std::lock_guard<std::mutex> lock(mutex_);
  ran_ = std::max(ran_, piece + 1);
  cv_.notify_all();
}

void PieceGates::releaseAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  released_ = true;
  cv_.notify_all();
}

}  // namespace spccl
