// CollContext: the algorithms' view of the engine (runtime/coll_context.h).
#include "runtime/coll_context.h"

#include <vector>

#include "base/check.h"
#include "base/clock.h"
#include "runtime/call_log.h"
#include "runtime/engine.h"
#include "runtime/flight_recorder.h"

namespace spccl {

CollContext::CollContext(Engine& engine, const CollSignature& signature, uint64_t seq,
                         CallChoice* choice)
    : engine_(engine), signature_(signature), seq_(seq), choice_(choice) {}
CollContext::CollContext(const CollContext& call, const CollSignature& signature)
    : engine_(call.engine_), signature_(signature), seq_(call.seq_), choice_(call.choice_) {}

int CollContext::rank() const { return engine_.rank(); }
int CollContext::nranks() const { return engine_.nranks(); }
const kernels::KernelTable& CollContext::kernels() const { return engine_.kernels(); }
const LinkModel& CollContext::linkModel() const { return engine_.linkModel(); }
void* CollContext::scratch(size_t bytes, int slot) { return engine_.scratch(bytes, slot); }
size_t CollContext::chunkBytes() const { return engine_.settings().chunkBytes; }
size_t CollContext::sparsePieceBytes() const { return engine_.settings().sparsePieceBytes; }
size_t CollContext::compressPieceBytes() const { return engine_.settings().compressPieceBytes; }
bool CollContext::checksRoots() const { return engine_.settings().checkRoots; }
const std::string& CollContext::denseAlgorithm() const { return engine_.settings().denseAlgorithm; }
const spcclCounters_t& CollContext::counters() const { return engine_.counters(); }

void CollContext::noteChoice(const char* algorithm, std::string_view reason) {
  if (FlightRecorder* flight = engine_.flightRecorder()) flight->noteAlgorithm(seq_, algorithm);
  if (choice_ == nullptr) return;
  choice_->algorithm = algorithm;
  choice_->reason.assign(reason);
}

namespace {

// The call's body, with its COLL line when that is on.
spcclResult_t runBody(Engine& engine, const CollSignature& signature, uint64_t seq,
                      const std::function<spcclResult_t(CollContext&)>& body) {
  if (!callLogEnabled(signature)) {
    CollContext ctx(engine, signature, seq);
    return body(ctx);
  }
  CallChoice choice;
  const uint64_t sentBefore = engine.counters().bytesSent;
  const double start = monotonicSeconds();
  CollContext ctx(engine, signature, seq, &choice);
  const spcclResult_t result = body(ctx);
  CallRecord record;
  record.seq = seq;
  record.seconds = monotonicSeconds() - start;
  record.bytesSent = engine.counters().bytesSent - sentBefore;
  record.result = result;
  logCall(engine, signature, choice, record);
  return result;
}

}  // namespace

spcclResult_t runCollective(Engine& engine, const CollSignature& signature,
                            const std::function<spcclResult_t(CollContext&)>& body) {
  uint64_t seq = 0;
  SPCCL_CHECK(engine.beginCollective(signature, &seq));
  FlightRecorder* flight = engine.flightRecorder();
  if (flight != nullptr) flight->begin(seq, signature, engine.counters());
  const spcclResult_t result = runBody(engine, signature, seq, body);
  if (flight != nullptr) flight->end(seq, result, engine.counters());
  // spcclRemoteError from the body: a peer sent what the algorithm cannot
  // take (a message that does not decode). The call is cut short with
  // operations still posted, so the communicator cannot go on, and the
  // other ranks, some of which never heard from that peer, must learn why
  // now, not at their deadline: break the engine, which tells them.
  if (result == spcclRemoteError && !engine.broken()) engine.abort(result, threadLastError());
  return result;
}

void CollContext::abortCall(spcclResult_t code, const std::string& why) {
  if (!engine_.broken()) engine_.abort(code, why);
}

spcclResult_t CollContext::isend(int peer, const void* data, size_t bytes, PeerRequest* request,
                                 uint8_t flags) {
  return engine_.postSend(peer, data, bytes, signature_, seq_, flags, &request->slot);
}

spcclResult_t CollContext::irecv(int peer, void* data, size_t capacity, PeerRequest* request) {
  return engine_.postRecv(peer, data, capacity, signature_, seq_, &request->slot);
}

spcclResult_t CollContext::wait(PeerRequest* request, size_t* received, uint8_t* flags) {
  if (!request->valid()) return spcclSuccess;
  int slot = request->slot;
  size_t got = 0;
  uint8_t gotFlags = 0;
  request->slot = -1;
  spcclResult_t res = engine_.wait(std::span<const int>(&slot, 1), std::span<size_t>(&got, 1),
                                   std::span<uint8_t>(&gotFlags, 1));
  if (received) *received = got;
  if (flags) *flags = gotFlags;
  return res;
}

spcclResult_t CollContext::waitAll(std::span<PeerRequest> requests) {
  std::vector<int> slots;
  slots.reserve(requests.size());
  for (PeerRequest& request : requests) {
    if (request.valid()) slots.push_back(request.slot);
    request.slot = -1;
  }
  if (slots.empty()) return spcclSuccess;
  return engine_.wait(slots);
}

spcclResult_t CollContext::send(int peer, const void* data, size_t bytes, uint8_t flags) {
  PeerRequest request;
  SPCCL_CHECK(isend(peer, data, bytes, &request, flags));
  return wait(&request);
}

spcclResult_t CollContext::recv(int peer, void* data, size_t capacity, size_t* received,
                                uint8_t* flags) {
  PeerRequest request;
  SPCCL_CHECK(irecv(peer, data, capacity, &request));
  return wait(&request, received, flags);
}

spcclResult_t CollContext::sendRecv(int sendPeer, const void* sendData, size_t sendBytes,
                                    int recvPeer, void* recvData, size_t recvCapacity,
                                    size_t* received) {
  PeerRequest requests[2];
  SPCCL_CHECK(irecv(recvPeer, recvData, recvCapacity, &requests[1]));
  SPCCL_CHECK(isend(sendPeer, sendData, sendBytes, &requests[0]));
  int slots[2] = {requests[0].slot, requests[1].slot};
  size_t got[2] = {0, 0};
  spcclResult_t res = engine_.wait(slots, got);
  if (received) *received = got[1];
  return res;
}

}  // namespace spccl
