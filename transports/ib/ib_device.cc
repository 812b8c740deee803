#include "transports/ib/ib_device.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/check.h"
#include "core/log.h"

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

spcclResult_t listActivePorts(const HcaSpec& spec, int gidIndexKnob, std::vector<IbPort>* out,
                              std::string* why) {
  out->clear();
  int count = 0;
  ibv_device** devices = ibv_get_device_list(&count);
  if (devices == nullptr || count == 0) {
    if (devices) ibv_free_device_list(devices);
    *why = "no RDMA device found (ibv_get_device_list listed none)";
    return spcclSuccess;
  }
  std::string seen;
  for (int d = 0; d < count; ++d) {
    std::string name = ibv_get_device_name(devices[d]);
    ibv_context* ctx = ibv_open_device(devices[d]);
    if (ctx == nullptr) continue;
    ibv_device_attr attr{};
    if (ibv_query_device(ctx, &attr) == 0) {
      for (int p = 1; p <= attr.phys_port_cnt; ++p) {
        ibv_port_attr pattr{};
        if (ibv_query_port(ctx, static_cast<uint8_t>(p), &pattr) != 0) continue;
        seen += (seen.empty() ? "" : ", ") + name + ":" + std::to_string(p) +
                (pattr.state == IBV_PORT_ACTIVE ? " (active)" : " (down)");
        if (pattr.state != IBV_PORT_ACTIVE || !hcaSelected(spec, name, p)) continue;
        IbPort port;
        port.device = name;
        port.port = p;
        port.linkLayer = pattr.link_layer;
        port.mtu = pattr.active_mtu;
        port.lid = pattr.lid;
        int index = gidIndexKnob;
        if (index < 0) index = pickGidIndex(gidTable(ctx, name, p, pattr.gid_tbl_len));
        port.gidIndex = index < 0 ? 0 : index;
        ibv_query_gid(ctx, static_cast<uint8_t>(p), port.gidIndex, &port.gid);
        char real[PATH_MAX];
        std::string sysfs = "/sys/class/infiniband/" + name + "/device";
        if (realpath(sysfs.c_str(), real) != nullptr) port.pciPath = real;
        out->push_back(port);
      }
    }
    ibv_close_device(ctx);
  }
  ibv_free_device_list(devices);
  if (out->empty())
    *why = "no active port selected by SPCCL_IB_HCA among: " + (seen.empty() ? "(none)" : seen);
  return spcclSuccess;
}

spcclResult_t openDevice(const IbPort& port, IbDevice* out) {
  int count = 0;
  ibv_device** devices = ibv_get_device_list(&count);
  for (int d = 0; devices != nullptr && d < count && out->context == nullptr; ++d)
    if (port.device == ibv_get_device_name(devices[d])) out->context = ibv_open_device(devices[d]);
  if (devices) ibv_free_device_list(devices);
  if (out->context == nullptr)
    return SPCCL_FAIL(spcclSystemError, "ib: cannot open device %s", port.device.c_str());
  out->pd = ibv_alloc_pd(out->context);
  if (out->pd == nullptr)
    return SPCCL_FAIL(spcclSystemError, "ib: ibv_alloc_pd on %s failed", port.device.c_str());
  out->port = port;
  out->maxInline = 64;
  SPCCL_INFO(kLogNet, "ib: using %s:%d (%s, MTU %d, LID %u, GID index %d) %s", port.device.c_str(),
             port.port, port.linkLayer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
             128 << port.mtu, port.lid, port.gidIndex, port.pciPath.c_str());
  return spcclSuccess;
}

}  // namespace spccl::ib
