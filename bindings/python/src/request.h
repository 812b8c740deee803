// A non-blocking spccl operation (spcclIallReduce and the other I* calls)
// as Python sees it: spccl._spccl.Request, behind spccl.Work.
//
// Two owners share one PendingRequest: the Python Request object and the
// communicator's handle (comm_handle.h), which completes every request it
// still tracks before it destroys the communicator. The Python objects the
// operation reads and writes (its arrays) are held here until it completes,
// so dropping the Work early cannot free memory the library still uses.
//
// Completion is found with spcclTest, never spcclWait: spcclTest and
// spcclWait report a failure through the request's communicator, which
// spcclCommAbort frees, and an abort may come from another thread while a
// wait is blocked. Every spcclTest runs under the communicator's life lock
// (CommLife), which the abort takes too; a request still pending when its
// communicator was aborted completes with spcclRemoteError here and its
// spcclRequest_t is left unreleased (the library cannot release it without
// its communicator).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <string>

#include "spccl.h"

namespace spccl_python {

// Whether a communicator still exists, for the requests issued on it.
struct CommLife {
  std::mutex mutex;
  bool destroyed = false;
  bool aborted = false;
};

class PendingRequest {
 public:
  PendingRequest(spcclRequest_t request, std::shared_ptr<CommLife> life, pybind11::object keepAlive)
      : request_(request), life_(std::move(life)), keepAlive_(std::move(keepAlive)) {}
  PendingRequest(const PendingRequest&) = delete;
  PendingRequest& operator=(const PendingRequest&) = delete;

  // One non-blocking look; true once the operation finished (successfully
  // or not). Needs no GIL.
  bool poll();
  // Polls until the operation finished. Needs no GIL; call it without.
  void block();

  // With the GIL held: True once finished (then the arrays are let go).
  bool test();
  // With the GIL held: releases it until the operation finished, then
  // raises the spccl.Error subclass of a failure with the library's message
  // (every call raises the same error again).
  void wait();

 private:
  void releaseKeepAlive();  // with the GIL held, once finished

  std::mutex mutex_;
  spcclRequest_t request_;  // nullptr once finished
  std::shared_ptr<CommLife> life_;
  pybind11::object keepAlive_;  // touched only with the GIL held
  bool finished_ = false;
  spcclResult_t result_ = spcclSuccess;
  std::string message_;
};

void bindRequest(pybind11::module_& m);

}  // namespace spccl_python
