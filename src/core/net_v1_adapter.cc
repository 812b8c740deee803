#include "core/net_v1_adapter.h"

#include <cstdio>

#include "base/check.h"

namespace spccl {

namespace {

// v1 plugins loaded at once in one process (ucx, an old ib build, ...).
constexpr int kSlots = 4;

struct Slot {
  const spcclNet_v1_t* v1 = nullptr;
  spcclNet_v2_t v2{};
};
Slot gSlots[kSlots];
int gUsed = 0;

spcclResult_t checkDevice(const char* what, int dev) {
  if (dev != 0)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: device %d does not exist (a version-1 plugin has device 0 only)", what,
                      dev);
  return spcclSuccess;
}

// The functions whose v2 form differs, bound to one slot's v1 table.
template <int S>
struct Forward {
  static const spcclNet_v1_t& v1() { return *gSlots[S].v1; }
  static spcclResult_t devices(int* ndev) {
    if (ndev == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "devices: ndev is NULL");
    *ndev = 1;
    return spcclSuccess;
  }
  static spcclResult_t getProperties(int dev, spcclNetProperties_v2_t* props) {
    SPCCL_CHECK(checkDevice("getProperties", dev));
    if (props == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "getProperties: props is NULL");
    *props = spcclNetProperties_v2_t{};
    std::snprintf(props->name, sizeof(props->name), "%s", v1().name);
    props->ptrSupport = SPCCL_PTR_HOST;
    return spcclSuccess;
  }
  // Version 1 registers host memory only.
  static spcclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    if (type != SPCCL_PTR_HOST)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "regMr: memory type %d needs a version-2 plugin (version 1 registers "
                        "host memory only)",
                        type);
    return v1().regMr(comm, data, size, mhandle);
  }
  static spcclResult_t listen(int dev, void* handle, void** listenComm) {
    SPCCL_CHECK(checkDevice("listen", dev));
    return v1().listen(handle, listenComm);
  }
  static spcclResult_t connect(int dev, const void* handle, void** sendComm) {
    SPCCL_CHECK(checkDevice("connect", dev));
    return v1().connect(handle, sendComm);
  }
  static void fill(spcclNet_v2_t* t) {
    const spcclNet_v1_t& from = v1();
    *t = spcclNet_v2_t{from.name,       SPCCL_NET_ABI_VERSION,
                       from.init,       devices,
                       getProperties,   listen,
                       connect,         from.accept,
                       regMr,           nullptr,
                       from.deregMr,    from.isend,
                       from.irecv,      from.test,
                       from.pollFd,     from.describe,
                       from.closeSend,  from.closeRecv,
                       from.closeListen};
  }
};

}  // namespace

const spcclNet_v2_t* adaptNetV1(const spcclNet_v1_t* table) {
  if (gUsed >= kSlots) return nullptr;
  int s = gUsed++;  // the registry calls this under its lock
  gSlots[s].v1 = table;
  switch (s) {
    case 0:
      Forward<0>::fill(&gSlots[s].v2);
      break;
    case 1:
      Forward<1>::fill(&gSlots[s].v2);
      break;
    case 2:
      Forward<2>::fill(&gSlots[s].v2);
      break;
    default:
      Forward<3>::fill(&gSlots[s].v2);
      break;
  }
  return &gSlots[s].v2;
}

}  // namespace spccl
