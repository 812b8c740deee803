// ib comms: one RC queue pair per one-way connection.
//   receiver, per irecv: registers the buffer (MR cache) and sends the
//     sender a clear-to-send (Cts: address, rkey, capacity) on the QP;
//   sender, per isend: takes the next Cts in order and RDMA-writes the
//     message there with an immediate carrying its size (a message larger
//     than the Cts capacity is refused on both sides: kOversizeImm);
//   receiver: each write-with-immediate completion finishes the oldest
//     posted receive with the size in the immediate.
// RC delivers in order, so requests complete in posting order. Completions
// come through a completion channel, whose fd the engine sleeps on; the
// side channel (transports/common/side_channel.h) carries QpInfo and tells
// when the peer is gone, before the QP's retries (~4 s x 7) would.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <deque>
#include <string>

#include "spccl_net.h"
#include "transports/common/side_channel.h"
#include "transports/ib/ib_device.h"
#include "transports/ib/ib_mr_cache.h"
#include "transports/ib/ib_qp_setup.h"

namespace spccl::ib {

enum class CommKind : uint32_t { Listen, Send, Recv };

struct Cts {
  uint64_t addr = 0;
  uint64_t capacity = 0;
  uint32_t rkey = 0;
  uint32_t seq = 0;
};

constexpr uint32_t kOversizeImm = 0xffffffffu;
constexpr size_t kMaxMessageBytes = 0x7fffffffu;  // the size travels in the 32-bit immediate

struct IbComm;

struct IbRequest {
  IbComm* comm = nullptr;
  bool used = false;
  bool started = false;  // sends: written; receives: Cts sent
  bool done = false;
  bool isSend = false;
  uint64_t order = 0;
  void* data = nullptr;
  size_t size = 0;  // send size or receive capacity
  size_t result = 0;
  Registration* registration = nullptr;  // the caller's mhandle, or one from the cache
  bool cacheReference = false;  // taken from the cache by this request: released at its end
};

struct IbComm {
  IbComm(CommKind k, IbDevice* d) : kind(k), device(d), cache(d->hca->cache.get()) {}
  ~IbComm();
  CommKind kind;
  IbDevice* device;  // the plugin's device this comm was listened, connected or accepted on
  MrCache* cache;    // its HCA's: registrations belong to that PD
  int listenFd = -1;
  std::string peerName;
  transport::SideChannel side;
  bool ready = false;
  int64_t peerGoneAtMs = -1;

  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  QpInfo local;
  std::array<Cts, SPCCL_NET_MAX_REQUESTS> ctsInbox{};  // sender: receive buffers for Cts
  ibv_mr* ctsMr = nullptr;
  std::deque<Cts> ctsArrived;
  uint32_t nextSeq = 0;
  uint64_t completions = 0;

  std::array<IbRequest, SPCCL_NET_MAX_REQUESTS> slots{};
  uint64_t nextOrder = 0;

  spcclResult_t failCode = spcclSuccess;
  std::string failMessage;
  bool failed() const { return failCode != spcclSuccess; }
  spcclResult_t fail(spcclResult_t code);
  spcclResult_t report() const;

  // QP and CQ in INIT, receive work requests posted, QpInfo queued on the side channel.
  spcclResult_t create();
  // registration: the caller's mhandle (regMr, regMrDmaBuf), which must
  // cover the buffer; NULL registers through the cache.
  spcclResult_t post(bool isSend, void* data, size_t size, Registration* registration,
                     IbRequest** out);
  void progress();
  spcclResult_t test(IbRequest* request, int* done, size_t* size);
  // Arms the CQ; false when completions arrived meanwhile (do not sleep).
  bool armForSleep();

 private:
  void finishSetup();
  void pollCompletions();
  void startPending();
  spcclResult_t postReceiveSlot(uint32_t slot);
  spcclResult_t sendCts(IbRequest* request);
  spcclResult_t writeMessage(IbRequest* request, const Cts& cts);
  spcclResult_t registerBuffer(IbRequest* request);
  void releaseBuffer(IbRequest* request);
  IbRequest* oldestUnfinished(bool started);
};

}  // namespace spccl::ib
