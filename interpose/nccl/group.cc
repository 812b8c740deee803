#include "group.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm_entry.h"
#include "entry_guard.h"
#include "errors.h"
#include "interposed_comm.h"
#include "memory_kind.h"
#include "real_nccl.h"
#include "run_each.h"
#include "settings.h"

namespace spccl::nccl {

namespace {

struct SelfTransfer {
  std::shared_ptr<InterposedComm> comm;
  bool isSend;
  void* buffer;
  size_t bytes;
  cudaStream_t stream;
};

struct GroupState {
  int depth = 0;
  std::vector<Creation> creations;
  std::vector<SelfTransfer> selfTransfers;
  std::vector<Operation> operations;
};
// This thread's open group, made by its outermost ncclGroupStart and freed
// by the matching ncclGroupEnd. A pointer: a thread_local with a
// destructor makes glibc register it with an allocation that aborts the
// process when memory has run out.
thread_local GroupState* tGroup = nullptr;

ncclResult_t firstFailure(ncclResult_t a, ncclResult_t b) { return a != ncclSuccess ? a : b; }

// runEach with the caller's CUDA context current on each thread (spccl's
// device calls need it).
template <typename Task>
void runEachInContext(size_t n, const Task& task) {
  void* context = currentCudaContext();
  runEach(n, [&task, context](size_t k) {
    makeCudaContextCurrent(context);
    task(k);
  });
}

// part's result; a failure it throws (memory ran out) becomes its error,
// so that the other parts' results still count.
template <typename Part>
ncclResult_t resultOf(const Part& part) {
  return guardEntry("ncclGroupEnd", part);
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One communicator's deferred calls, in issue order.
ncclResult_t replay(InterposedComm* comm, const std::vector<Operation*>& ops) {
  ncclResult_t result = ncclSuccess;
  bool open = false;
  auto start = std::chrono::steady_clock::now();
  auto close = [&] {
    const ncclResult_t r = finishSpccl(comm, spcclGroupEnd());
    comm->report.record("ncclGroupEnd", "spccl group end: completes the grouped calls", 0,
                        secondsSince(start));
    open = false;
    return r;
  };
  for (Operation* op : ops) {
    if (op->spcclGroupable && !open) {
      spcclGroupStart();
      open = true;
      start = std::chrono::steady_clock::now();
    } else if (!op->spcclGroupable && open) {
      result = firstFailure(result, close());
    }
    result = firstFailure(result, op->run());
  }
  if (open) result = firstFailure(result, close());
  return result;
}

// A deferred call's lease on its communicator, taken at the group's end;
// empty, with *result set, when the communicator was destroyed since.
CommLease leaseAgain(const std::shared_ptr<InterposedComm>& comm, const char* what,
                     ncclResult_t* result) {
  CommLease lease(comm);
  if (!lease)
    *result = fail(comm.get(), ncclInvalidUsage,
                   "ncclGroupEnd: %s: the communicator was destroyed or aborted after the call was "
                   "issued in the group",
                   what);
  return lease;
}

ncclResult_t runCreations(std::vector<Creation>& creations, bool endRealGroup,
                          ncclSimInfo_t* simInfo) {
  const size_t n = creations.size();
  std::vector<ncclResult_t> results(n, ncclSuccess);
  std::vector<CommLease> parents(n);
  for (size_t i = 0; i < n; ++i)
    if (creations[i].uses != nullptr)
      parents[i] = leaseAgain(creations[i].uses, "a split or shrink", &results[i]);
  runEachInContext(n, [&](size_t i) {
    if (results[i] == ncclSuccess) results[i] = resultOf(creations[i].spcclPart);
  });
  for (size_t i = 0; i < n; ++i)
    if (results[i] == ncclSuccess && creations[i].realPart) results[i] = creations[i].realPart();
  ncclResult_t groupResult = ncclSuccess;
  if (endRealGroup) {
    const RealNccl* real = realNccl();
    groupResult = simInfo != nullptr ? SPCCL_FORWARD(real, GroupSimulateEnd, simInfo)
                                     : SPCCL_FORWARD(real, GroupEnd);
    if (groupResult != ncclSuccess && groupResult != ncclInProgress) noteRealFailure();
  }
  ncclResult_t result = groupResult;
  for (size_t i = 0; i < n; ++i)
    result = firstFailure(result, creations[i].complete(firstFailure(results[i], groupResult)));
  return result;
}

ncclResult_t runSelfTransfers(const std::vector<SelfTransfer>& transfers) {
  ncclResult_t result = ncclSuccess;
  std::vector<InterposedComm*> done;
  for (const SelfTransfer& first : transfers) {
    InterposedComm* comm = first.comm.get();
    if (std::find(done.begin(), done.end(), comm) != done.end()) continue;
    done.push_back(comm);
    std::vector<const SelfTransfer*> sends, recvs;
    for (const SelfTransfer& t : transfers)
      if (t.comm.get() == comm) (t.isSend ? sends : recvs).push_back(&t);
    if (sends.size() != recvs.size()) {
      result = firstFailure(result, fail(comm, ncclInvalidUsage,
                                         "ncclGroupEnd: %zu sends to this rank (%d) but %zu "
                                         "receives from it in the group",
                                         sends.size(), comm->rank, recvs.size()));
      continue;
    }
    for (size_t k = 0; k < sends.size(); ++k) {
      if (sends[k]->bytes != recvs[k]->bytes) {
        result = firstFailure(
            result, fail(comm, ncclInvalidArgument,
                         "ncclGroupEnd: send %zu to this rank has %zu bytes, its receive %zu", k,
                         sends[k]->bytes, recvs[k]->bytes));
        continue;
      }
      const auto start = std::chrono::steady_clock::now();
      std::string error;
      const bool copied =
          (sends[k]->stream == recvs[k]->stream || finishStreamWork(sends[k]->stream, &error)) &&
          copyOnStream(recvs[k]->buffer, sends[k]->buffer, sends[k]->bytes, recvs[k]->stream,
                       &error);
      if (!copied) {
        result =
            firstFailure(result, fail(comm, ncclUnhandledCudaError,
                                      "ncclGroupEnd: the copy to this rank: %s", error.c_str()));
        continue;
      }
      comm->report.record("ncclSend+ncclRecv", "local copy (peer is this rank)", sends[k]->bytes,
                          secondsSince(start));
    }
  }
  return result;
}

ncclResult_t runOperations(std::vector<Operation>& operations) {
  std::vector<InterposedComm*> comms;
  std::vector<std::vector<Operation*>> perComm;
  for (Operation& op : operations) {
    size_t k = 0;
    while (k < comms.size() && comms[k] != op.comm.get()) ++k;
    if (k == comms.size()) {
      comms.push_back(op.comm.get());
      perComm.emplace_back();
    }
    perComm[k].push_back(&op);
  }
  std::vector<ncclResult_t> results(comms.size(), ncclSuccess);
  std::vector<CommLease> leases(comms.size());
  for (size_t k = 0; k < comms.size(); ++k)
    leases[k] = leaseAgain(perComm[k].front()->comm, "its collectives", &results[k]);
  runEachInContext(comms.size(), [&](size_t k) {
    if (results[k] == ncclSuccess)
      results[k] = resultOf([&] { return replay(comms[k], perComm[k]); });
  });
  ncclResult_t result = ncclSuccess;
  for (ncclResult_t r : results) result = firstFailure(result, r);
  return result;
}

}  // namespace

bool inGroup() { return tGroup != nullptr; }

void groupStart() {
  if (tGroup == nullptr) tGroup = new GroupState;  // (out of memory: the entry's guard)
  ++tGroup->depth;
}

ncclResult_t runOrDefer(Creation c) {
  if (inGroup()) {
    tGroup->creations.push_back(std::move(c));
    return ncclSuccess;
  }
  ncclResult_t result = c.spcclPart();
  if (result == ncclSuccess && c.realPart) result = c.realPart();
  return c.complete(result);
}

void deferSelfTransfer(std::shared_ptr<InterposedComm> comm, bool isSend, void* buffer,
                       size_t bytes, cudaStream_t stream) {
  tGroup->selfTransfers.push_back(SelfTransfer{std::move(comm), isSend, buffer, bytes, stream});
}

void defer(Operation op) { tGroup->operations.push_back(std::move(op)); }

uint64_t deferredCollectives(const InterposedComm* comm) {
  uint64_t n = 0;
  if (!inGroup()) return n;
  for (const Operation& op : tGroup->operations)
    n += op.comm.get() == comm && op.collective ? 1 : 0;
  return n;
}

ncclResult_t groupEnd(ncclSimInfo_t* simInfo) {
  if (!inGroup())
    return fail(nullptr, ncclInvalidUsage, "ncclGroupEnd without a matching ncclGroupStart");
  const bool forward = forwarding();
  if (--tGroup->depth > 0) {
    if (!forward) return ncclSuccess;
    const RealNccl* real = realNccl();
    return simInfo != nullptr ? SPCCL_FORWARD(real, GroupSimulateEnd, simInfo)
                              : SPCCL_FORWARD(real, GroupEnd);
  }
  const std::unique_ptr<GroupState> group(tGroup);
  tGroup = nullptr;
  ncclResult_t result = runCreations(group->creations, forward, simInfo);
  // A simulated group's calls do not run.
  if (simInfo == nullptr) {
    result = firstFailure(result, runSelfTransfers(group->selfTransfers));
    result = firstFailure(result, runOperations(group->operations));
  }
  return result;
}

}  // namespace spccl::nccl
