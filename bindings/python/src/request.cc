#include "request.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "errors.h"

namespace py = pybind11;

namespace spccl_python {

bool PendingRequest::poll() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return true;
  std::lock_guard<std::mutex> lifeLock(life_->mutex);
  if (life_->destroyed) {
    // Only an abort destroys a communicator with requests pending: close()
    // completes them first (CommHandle::close).
    finished_ = true;
    result_ = spcclRemoteError;
    message_ = life_->aborted ? "the communicator was aborted before this operation completed"
                              : "the communicator was destroyed before this operation completed";
    request_ = nullptr;
    return true;
  }
  int done = 0;
  const spcclResult_t result = spcclTest(request_, &done);
  if (result == spcclSuccess && done == 0) return false;
  finished_ = true;
  result_ = result;
  // spcclTest put the request's message in this thread's last error.
  if (result != spcclSuccess) message_ = spcclGetLastError(nullptr);
  request_ = nullptr;  // released by spcclTest
  return true;
}

void PendingRequest::block() {
  // The engine's own deadlines (SPCCL_TIMEOUT_MS) bound the wait; the
  // back-off keeps the polling thread off the CPUs the collective uses.
  auto pause = std::chrono::microseconds(10);
  while (!poll()) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

void PendingRequest::releaseKeepAlive() { keepAlive_ = py::none(); }

bool PendingRequest::test() {
  if (!poll()) return false;
  releaseKeepAlive();
  return true;
}

void PendingRequest::wait() {
  {
    py::gil_scoped_release released;
    block();
  }
  releaseKeepAlive();
  if (result_ != spcclSuccess) raiseError(result_, message_);
}

void bindRequest(py::module_& m) {
  py::class_<PendingRequest, std::shared_ptr<PendingRequest>>(m, "Request")
      .def("test", &PendingRequest::test)
      .def("wait", &PendingRequest::wait);
}

}  // namespace spccl_python
