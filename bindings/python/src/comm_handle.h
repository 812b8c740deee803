// The Python-side owner of one spcclComm_t. Python objects may be collected
// in any order at exit, so the handle destroys its communicator itself
// unless close()/abort() already did. It tracks the non-blocking operations
// issued on the communicator (request.h) and completes them before it
// destroys it.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "errors.h"
#include "request.h"
#include "spccl.h"

namespace spccl_python {

class CommHandle {
 public:
  explicit CommHandle(spcclComm_t comm) : comm_(comm), life_(std::make_shared<CommLife>()) {}
  CommHandle(const CommHandle&) = delete;
  CommHandle& operator=(const CommHandle&) = delete;
  ~CommHandle();

  // The live communicator; raises spccl.InvalidUsageError once closed.
  spcclComm_t get() const;
  bool closed() const { return comm_ == nullptr; }
  // Completes the pending non-blocking operations, then destroys.
  void close();
  // Destroys at once; pending operations fail with spccl.RemoteError.
  void abort();

  // Issues a non-blocking operation: issue(comm, &request) runs with the
  // GIL released; keepAlive (the arrays the operation uses) is held until
  // it completes. Raises if the call fails to start.
  template <typename Issue>
  std::shared_ptr<PendingRequest> start(pybind11::object keepAlive, Issue&& issue);

 private:
  std::shared_ptr<PendingRequest> track(spcclRequest_t request, pybind11::object keepAlive);

  spcclComm_t comm_;
  std::shared_ptr<CommLife> life_;
  // In issue order; the finished ones are dropped at the next start.
  std::vector<std::shared_ptr<PendingRequest>> pending_;
};

template <typename Issue>
std::shared_ptr<PendingRequest> CommHandle::start(pybind11::object keepAlive, Issue&& issue) {
  spcclComm_t comm = get();
  spcclRequest_t request = nullptr;
  spcclResult_t result;
  {
    // Issuing may wait: a call rejected on its arguments tells the peers
    // after the earlier operations.
    pybind11::gil_scoped_release released;
    result = issue(comm, &request);
  }
  raiseOnError(result, comm);
  return track(request, std::move(keepAlive));
}

// Runs an spccl call on the handle's communicator with the GIL released
// (other Python threads, e.g. the autograd engine feeding a DDP hook, keep
// running while this one communicates), then raises on failure.
template <typename Call>
void runReleased(const CommHandle& handle, Call&& call) {
  spcclComm_t comm = handle.get();
  spcclResult_t result;
  {
    pybind11::gil_scoped_release released;
    result = call(comm);
  }
  raiseOnError(result, comm);
}

void bindComm(pybind11::module_& m);
void bindDenseCollectives(pybind11::class_<CommHandle>& comm);
void bindNonBlocking(pybind11::class_<CommHandle>& comm);
void bindSparse(pybind11::class_<CommHandle>& comm);
void bindCompressed(pybind11::class_<CommHandle>& comm);
void bindTokenTopk(pybind11::class_<CommHandle>& comm);
void bindMigrate(pybind11::class_<CommHandle>& comm);
void bindPlanners(pybind11::module_& m);
void bindBalancePlan(pybind11::class_<CommHandle>& comm);
void bindNames(pybind11::module_& m);

}  // namespace spccl_python
