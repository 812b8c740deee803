// The meeting points of a call cut into pieces (coll/dense_pieces.h)
// whose buffers are staged in a stream's order: the stream copies piece
// k in while the communicator's worker runs piece k-1, and copies piece k
// out while the worker runs piece k+1.
//
// On the stream, in order: for every piece, its copies in and then
// inputStaged(k) (a host function that returns at once); then for every
// piece, holdForOutput(k) (a host function that waits until the worker
// ran piece k) and its copies out. The worker waits in awaitInput(k)
// before piece k, and calls pieceRan(k) after it. Pieces and copies both
// go in order, so two counters say it all.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace spccl {

class PieceGates {
 public:
  // On the stream (a host function): the copies in of `piece` are done.
  void inputStaged(size_t piece);
  // On the stream: returns once the worker ran `piece`, or released all.
  void holdForOutput(size_t piece);

  // The worker: whether the input of `piece` arrived within timeoutMs.
  bool awaitInput(size_t piece, int64_t timeoutMs);
  // The worker: `piece` ran; its copies out may start.
  void pieceRan(size_t piece);

  // Every hold returns, now and later: the call ended (done, failed or
  // dropped by an abort). The stream then copies out what the pinned
  // buffers hold.
  void releaseAll();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  size_t staged_ = 0;  // pieces whose input is in the pinned buffers
  size_t ran_ = 0;     // pieces the worker ran
  bool released_ = false;
};

}  // namespace spccl
