// The Python-side owner of one spcclComm_t. Python objects may be collected
// in any order at exit, so the handle destroys its communicator itself
// unless close()/abort() already did.
#pragma once

#include <pybind11/pybind11.h>

#include "errors.h"
#include "spccl.h"

namespace spccl_python {

class CommHandle {
 public:
  explicit CommHandle(spcclComm_t comm) : comm_(comm) {}
  CommHandle(const CommHandle&) = delete;
  CommHandle& operator=(const CommHandle&) = delete;
  ~CommHandle();

  // The live communicator; raises spccl.InvalidUsageError once closed.
  spcclComm_t get() const;
  bool closed() const { return comm_ == nullptr; }
  void close();
  void abort();

 private:
  spcclComm_t comm_;
};

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
void bindSparse(pybind11::class_<CommHandle>& comm);
void bindCompressed(pybind11::class_<CommHandle>& comm);
void bindTokenTopk(pybind11::class_<CommHandle>& comm);
void bindMigrate(pybind11::class_<CommHandle>& comm);
void bindPlanners(pybind11::module_& m);
void bindBalancePlan(pybind11::class_<CommHandle>& comm);
void bindNames(pybind11::module_& m);

}  // namespace spccl_python
