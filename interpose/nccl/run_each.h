// Runs task(i) for every i < n at once: each on a thread of its own, or
// inline when n is 1. The tasks may wait for one another (the ranks of a
// rendezvous driven by one thread), so none may wait for another to end.
// - A thread that cannot start (std::system_error, or std::bad_alloc: the
//   process is out of threads or memory) has its task run on the calling
//   thread instead, while the others run: a rendezvous then still
//   completes, or its deadline ends it.
// - A task's exception does not end the process (as it would on a
//   thread): the first one is thrown again here, once every task ended.
// Every thread started is joined before this returns.
#pragma once

#include <cstddef>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace spccl::nccl {

template <typename Task>
void runEach(size_t n, const Task& task) {
  std::mutex mutex;
  std::exception_ptr firstFailure;
  auto run = [&](size_t i) noexcept {
    try {
      task(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!firstFailure) firstFailure = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  std::vector<size_t> onThisThread;  // tasks whose thread did not start
  bool threaded = n > 1;
  if (threaded) {
    try {
      threads.reserve(n);
      onThisThread.reserve(n);
    } catch (const std::bad_alloc&) {
      threaded = false;
    }
  }
  if (!threaded) {
    // One task, or no room for the lists: inline, one after another (a
    // rendezvous among them ends at its deadline).
    for (size_t i = 0; i < n; ++i) run(i);
  } else {
    for (size_t i = 0; i < n; ++i) {
      try {
        threads.emplace_back(run, i);
      } catch (const std::system_error&) {
        onThisThread.push_back(i);  // within the capacity reserved: cannot throw
      } catch (const std::bad_alloc&) {
        onThisThread.push_back(i);
      }
    }
    for (size_t i : onThisThread) run(i);
    for (std::thread& t : threads) t.join();
  }
  if (firstFailure) std::rethrow_exception(firstFailure);
}

}  // namespace spccl::nccl
