#include "transports/ib/ib_device.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include "base/check.h"
#include "base/log.h"
#include "transports/ib/ib_dmabuf.h"
#include "transports/ib/ib_qp_setup.h"

namespace spccl::ib {

namespace {

std::string readLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool isZero(const ibv_gid& gid) {
  for (uint8_t b : gid.raw)
    if (b != 0) return false;
  return true;
}

std::vector<GidEntry> gidTable(ibv_context* ctx, const std::string& device, int port,
                               int tableLength) {
  std::vector<GidEntry> table;
  for (int i = 0; i < tableLength; ++i) {
    GidEntry e;
    e.index = i;
    if (ibv_query_gid(ctx, static_cast<uint8_t>(port), i, &e.gid) != 0 || isZero(e.gid)) continue;
    e.type = readLine("/sys/class/infiniband/" + device + "/ports/" + std::to_string(port) +
                      "/gid_attrs/types/" + std::to_string(i));
    table.push_back(e);
  }
  return table;
}

}  // namespace

spcclResult_t listActivePorts(int gidIndexKnob, std::vector<IbPort>* out, std::string* seen) {
  out->clear();
  seen->clear();
  int count = 0;
  ibv_device** devices = ibv_get_device_list(&count);
  for (int d = 0; devices != nullptr && d < count; ++d) {
    std::string name = ibv_get_device_name(devices[d]);
    ibv_context* ctx = ibv_open_device(devices[d]);
    if (ctx == nullptr) {
      *seen += (seen->empty() ? "" : ", ") + name + " (cannot be opened)";
      continue;
    }
    ibv_device_attr attr{};
    int portCount = ibv_query_device(ctx, &attr) == 0 ? attr.phys_port_cnt : 0;
    for (int p = 1; p <= portCount; ++p) {
      ibv_port_attr pattr{};
      if (ibv_query_port(ctx, static_cast<uint8_t>(p), &pattr) != 0) continue;
      IbPort port;
      port.device = name;
      port.port = p;
      *seen += (seen->empty() ? "" : ", ") + portName(port) +
               (pattr.state == IBV_PORT_ACTIVE ? " (active)" : " (down)");
      if (pattr.state != IBV_PORT_ACTIVE) continue;
      port.linkLayer = pattr.link_layer;
      port.mtu = pattr.active_mtu;
      port.lid = pattr.lid;
      port.speedMbps = linkSpeedMbps(pattr.active_speed, pattr.active_width);
      int index = gidIndexKnob;
      if (index < 0) index = pickGidIndex(gidTable(ctx, name, p, pattr.gid_tbl_len));
      port.gidIndex = index < 0 ? 0 : index;
      ibv_query_gid(ctx, static_cast<uint8_t>(p), port.gidIndex, &port.gid);
      char real[PATH_MAX];
      std::string sysfs = "/sys/class/infiniband/" + name + "/device";
      if (realpath(sysfs.c_str(), real) != nullptr) port.pciPath = real;
      out->push_back(port);
    }
    ibv_close_device(ctx);
  }
  if (devices) ibv_free_device_list(devices);
  return spcclSuccess;
}

IbHca::~IbHca() {
  cache.reset();
  if (pd) ibv_dealloc_pd(pd);
  if (context) ibv_close_device(context);
}

namespace {

spcclResult_t openHca(const std::string& name, size_t cacheEntries, int64_t gdrKnob,
                      std::shared_ptr<IbHca>* out) {
  auto hca = std::make_shared<IbHca>();
  hca->name = name;
  int count = 0;
  ibv_device** devices = ibv_get_device_list(&count);
  for (int d = 0; devices != nullptr && d < count && hca->context == nullptr; ++d)
    if (name == ibv_get_device_name(devices[d])) hca->context = ibv_open_device(devices[d]);
  if (devices) ibv_free_device_list(devices);
  if (hca->context == nullptr)
    return SPCCL_FAIL(spcclSystemError, "ib: cannot open device %s", name.c_str());
  hca->pd = ibv_alloc_pd(hca->context);
  if (hca->pd == nullptr)
    return SPCCL_FAIL(spcclSystemError, "ib: ibv_alloc_pd on %s failed", name.c_str());
  ibv_pd* pd = hca->pd;
  auto reg = [pd, name](void* base, size_t length, Registration* registration) {
    auto* mr = ibv_reg_mr(pd, base, length, kMrAccess);  // host or, with peer memory, GPU
    if (mr == nullptr)
      return SPCCL_FAIL(spcclSystemError, "ib: ibv_reg_mr of %zu bytes at %p on %s failed: %s",
                        length, base, name.c_str(), strerror(errno));
    registration->mr = mr;
    registration->lkey = mr->lkey;
    registration->rkey = mr->rkey;
    return spcclSuccess;
  };
  auto dereg = [](Registration& r) { ibv_dereg_mr(static_cast<ibv_mr*>(r.mr)); };
  hca->cache = std::make_unique<MrCache>(reg, dereg, cacheEntries,
                                         static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  hca->gdr = decideGdrSupport("/sys", probeDmaBuf(pd), gdrKnob);
  *out = std::move(hca);
  return spcclSuccess;
}

}  // namespace

spcclResult_t openDevices(const std::vector<IbPort>& ports, size_t cacheEntries, int64_t gdrKnob,
                          std::vector<IbDevice>* out) {
  out->clear();
  std::map<std::string, std::shared_ptr<IbHca>> opened;
  for (const IbPort& port : ports) {
    std::shared_ptr<IbHca>& hca = opened[port.device];
    if (hca == nullptr) SPCCL_CHECK(openHca(port.device, cacheEntries, gdrKnob, &hca));
    IbDevice device;
    device.port = port;
    device.hca = hca;
    out->push_back(std::move(device));
  }
  return spcclSuccess;
}

}  // namespace spccl::ib
