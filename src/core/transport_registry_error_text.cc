#include "core/transport_registry_error_text.h"

#include <cstddef>

#include "base/check.h"

namespace spccl {

namespace {

// Plugins loaded at once in one process (ucx, ib, ...): far fewer than this.
constexpr int kSlots = 4;

struct Slot {
  const spcclNet_v2_t* real = nullptr;
  PluginLastErrorFn lastError = nullptr;
  spcclNet_v2_t wrapped{};
};
Slot gSlots[kSlots];
int gUsed = 0;

template <int S>
spcclResult_t relay(spcclResult_t res) {
  if (res != spcclSuccess) {
    const char* text = gSlots[S].lastError();
    if (text != nullptr && text[0] != '\0') setThreadLastError(text);
  }
  return res;
}

// One set of C-callable functions per slot: each calls the plugin's and
// relays its error text.
template <int S>
struct Relay {
  static const spcclNet_v2_t& real() { return *gSlots[S].real; }
  static spcclResult_t init(const spcclNetInitArgs_v2_t* a) { return relay<S>(real().init(a)); }
  static spcclResult_t devices(int* n) { return relay<S>(real().devices(n)); }
  static spcclResult_t getProperties(int d, spcclNetProperties_v2_t* p) {
    return relay<S>(real().getProperties(d, p));
  }
  static spcclResult_t listen(int d, void* h, void** l) { return relay<S>(real().listen(d, h, l)); }
  static spcclResult_t connect(int d, const void* h, void** s) {
    return relay<S>(real().connect(d, h, s));
  }
  static spcclResult_t accept(void* l, void** r) { return relay<S>(real().accept(l, r)); }
  static spcclResult_t regMr(void* c, void* d, size_t n, int type, void** m) {
    return relay<S>(real().regMr(c, d, n, type, m));
  }
  static spcclResult_t regMrDmaBuf(void* c, void* d, size_t n, int type, uint64_t offset, int fd,
                                   void** m) {
    return relay<S>(real().regMrDmaBuf(c, d, n, type, offset, fd, m));
  }
  static spcclResult_t deregMr(void* c, void* m) { return relay<S>(real().deregMr(c, m)); }
  static spcclResult_t isend(void* c, const void* d, size_t n, void* m, void** r) {
    return relay<S>(real().isend(c, d, n, m, r));
  }
  static spcclResult_t irecv(void* c, void* d, size_t n, void* m, void** r) {
    return relay<S>(real().irecv(c, d, n, m, r));
  }
  static spcclResult_t test(void* r, int* done, size_t* size) {
    return relay<S>(real().test(r, done, size));
  }
  static spcclResult_t pollFd(void* c, int* fd, short* ev) {
    return relay<S>(real().pollFd(c, fd, ev));
  }
  static spcclResult_t describe(void* c, char* b, size_t n) {
    return relay<S>(real().describe(c, b, n));
  }
  static spcclResult_t closeSend(void* c) { return relay<S>(real().closeSend(c)); }
  static spcclResult_t closeRecv(void* c) { return relay<S>(real().closeRecv(c)); }
  static spcclResult_t closeListen(void* c) { return relay<S>(real().closeListen(c)); }
  static void fill(spcclNet_v2_t* t) {
    *t = real();
    t->init = init;
    t->devices = devices;
    t->getProperties = getProperties;
    t->listen = listen;
    t->connect = connect;
    t->accept = accept;
    t->regMr = regMr;
    if (t->regMrDmaBuf != nullptr) t->regMrDmaBuf = regMrDmaBuf;  // NULL stays NULL
    t->deregMr = deregMr;
    t->isend = isend;
    t->irecv = irecv;
    t->test = test;
    t->pollFd = pollFd;
    t->describe = describe;
    t->closeSend = closeSend;
    t->closeRecv = closeRecv;
    t->closeListen = closeListen;
  }
};

}  // namespace

const spcclNet_v2_t* withPluginErrorText(const spcclNet_v2_t* table, PluginLastErrorFn lastError) {
  if (lastError == nullptr || gUsed >= kSlots) return table;
  int s = gUsed++;  // the registry calls this under its lock
  gSlots[s].real = table;
  gSlots[s].lastError = lastError;
  switch (s) {
    case 0:
      Relay<0>::fill(&gSlots[s].wrapped);
      break;
    case 1:
      Relay<1>::fill(&gSlots[s].wrapped);
      break;
    case 2:
      Relay<2>::fill(&gSlots[s].wrapped);
      break;
    default:
      Relay<3>::fill(&gSlots[s].wrapped);
      break;
  }
  return &gSlots[s].wrapped;
}

}  // namespace spccl
