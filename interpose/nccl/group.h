// ncclGroupStart/End when spccl serves calls: what a group defers, per
// thread, and how its end runs it.
//
// NCCL lets one thread drive several ranks inside a group (nccl-tests,
// single-process multi-GPU programs): ncclCommInitRank, ncclCommSplit and
// collectives on communicators of the same clique, which would deadlock if
// run one after the other. So at the outermost end
//  1. the communicator creations run, each in a thread of its own when
//     there are several (their spccl part: spccl's rendezvous),
//  2. in forward mode their real-NCCL part follows on this thread, inside
//     the real group, which ends next,
//  3. the collectives and point-to-point calls run per communicator, each
//     communicator's in issue order and in a thread of its own when there
//     are several; runs of consecutive calls that spccl can group (dense
//     collectives, send, recv) go inside one spcclGroupStart/End, so that
//     sends and receives are posted together; a sparse, compressed, gather
//     or scatter call (which spccl runs at once) ends the run before it.
// Calls forwarded to the real NCCL are not deferred here: the real group
// (started with ours) defers them.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace spccl::nccl {

struct InterposedComm;

struct Creation {
  // Step 1; may run on a thread of its own.
  std::function<ncclResult_t()> spcclPart;
  // Step 2, forward mode, when step 1 succeeded; may be empty.
  std::function<ncclResult_t()> realPart;
  // Then, with the first failure of the steps (or success): publishes the
  // communicator or releases it; returns the call's result.
  std::function<ncclResult_t(ncclResult_t)> complete;
  // The parent of a split or shrink: deferred, the steps run under a lease
  // taken at the group's end (the issuing call's lease has been returned).
  std::shared_ptr<InterposedComm> uses;
};

struct Operation {
  std::shared_ptr<InterposedComm> comm;  // leased again at the group's end
  bool spcclGroupable = false;           // a dense collective, send or receive
  bool collective = false;               // not send or receive
  std::function<ncclResult_t()> run;     // issues the spccl call
};

bool inGroup();
// A send or receive whose peer is this rank (spccl has none: it copies).
// Inside a group only; the group's end pairs them in issue order, per
// communicator, before its other calls. With device buffers or a stream
// the copy is enqueued on the receive's stream (after the send's stream's
// work, when that is another stream).
void deferSelfTransfer(std::shared_ptr<InterposedComm> comm, bool isSend, void* buffer,
                       size_t bytes, cudaStream_t stream);
void groupStart();
// Outside a group: runs c now. Inside: at the outermost end.
ncclResult_t runOrDefer(Creation c);
// Inside a group only.
void defer(Operation op);
// Collectives deferred on comm so far (spccl's withdrawal counts them).
uint64_t deferredCollectives(const InterposedComm* comm);
// simInfo non-NULL: ncclGroupSimulateEnd, whose operations do not run.
ncclResult_t groupEnd(ncclSimInfo_t* simInfo);

}  // namespace spccl::nccl
