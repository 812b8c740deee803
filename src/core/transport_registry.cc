#include "core/transport_registry.h"

#include <dlfcn.h>

#include <cstdarg>
#include <map>
#include <mutex>

#include "base/check.h"
#include "base/knobs.h"
#include "core/net_v1_adapter.h"
#include "core/transport_registry_error_text.h"
#include "core/transport_testing.h"
#include "transports/shm/shm_net.h"
#include "transports/tcp/tcp_net.h"

namespace spccl {

namespace {

TransportWrapper gWrapper = nullptr;  // core/transport_testing.h

void pluginLogger(int level, const char* file, int line, const char* fmt, ...) {
  LogLevel lvl = level <= SPCCL_NET_LOG_WARN   ? LogLevel::Warn
                 : level == SPCCL_NET_LOG_INFO ? LogLevel::Info
                                               : LogLevel::Trace;
  if (!logEnabled(lvl, kLogNet)) return;
  va_list args;
  va_start(args, fmt);
  logMessageV(lvl, kLogNet, file, line, fmt, args);
  va_end(args);
}

// The plugin by its plain name (LD_LIBRARY_PATH, the system paths), else
// from the directory libspccl itself was loaded from, where the build and
// the install put the plugins.
void* openPlugin(const std::string& library, std::string* error) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) return handle;
  *error = dlerror();
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&pluginLogger), &self) == 0 || self.dli_fname == nullptr)
    return nullptr;
  std::string path = self.dli_fname;
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return nullptr;
  path = path.substr(0, slash + 1) + library;
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) *error += std::string("; ") + dlerror();
  return handle;
}

// The plugin's v2 table, else its v1 table run as a one-device transport.
spcclResult_t pluginTable(void* handle, const std::string& library, const spcclNet_v2_t** out) {
  auto* v2 = static_cast<const spcclNet_v2_t*>(dlsym(handle, SPCCL_NET_PLUGIN_SYMBOL));
  if (v2 != nullptr && v2->abiVersion == SPCCL_NET_ABI_VERSION) {
    SPCCL_INFO(kLogNet, "loaded transport plugin %s (ABI version 2)", library.c_str());
    *out = v2;
    return spcclSuccess;
  }
  auto* v1 = static_cast<const spcclNet_v1_t*>(dlsym(handle, SPCCL_NET_PLUGIN_SYMBOL_V1));
  if (v1 != nullptr && v1->abiVersion == 1) {
    *out = adaptNetV1(v1);
    if (*out == nullptr)
      return SPCCL_FAIL(spcclInternalError, "%s: too many version-1 plugins in one process",
                        library.c_str());
    SPCCL_INFO(kLogNet, "loaded transport plugin %s (ABI version 1, one device)", library.c_str());
    return spcclSuccess;
  }
  return SPCCL_FAIL(spcclInvalidArgument,
                    "%s exports neither %s (ABI version %d) nor %s (version 1)", library.c_str(),
                    SPCCL_NET_PLUGIN_SYMBOL, SPCCL_NET_ABI_VERSION, SPCCL_NET_PLUGIN_SYMBOL_V1);
}

spcclResult_t findTable(const std::string& name, const spcclNet_v2_t** out) {
  if (name == "tcp") {
    *out = spcclNetTcp();
    return spcclSuccess;
  }
  if (name == "shm") {
    *out = spcclNetShm();
    return spcclSuccess;
  }
  if (name == "cuda_ipc") {
    *out = spcclNetCudaIpc();
    return spcclSuccess;
  }
  std::string library = "libspccl-net-" + name + ".so";
  std::string error;
  void* handle = openPlugin(library, &error);
  if (handle == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "SPCCL_TRANSPORT=%s: no such built-in transport and %s could not be "
                      "loaded: %s",
                      name.c_str(), library.c_str(), error.c_str());
  const spcclNet_v2_t* table = nullptr;
  SPCCL_CHECK(pluginTable(handle, library, &table));
  *out = withPluginErrorText(
      table, reinterpret_cast<PluginLastErrorFn>(dlsym(handle, kPluginLastErrorSymbol)));
  return spcclSuccess;
}

}  // namespace

spcclResult_t getTransport(const std::string& name, const spcclNet_v2_t** out) {
  static std::mutex mutex;
  static std::map<std::string, const spcclNet_v2_t*> ready;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = ready.find(name);
  if (it != ready.end()) {
    *out = it->second;
    return spcclSuccess;
  }
  const spcclNet_v2_t* table = nullptr;
  SPCCL_CHECK(findTable(name, &table));
  std::string ifname = knobString("SPCCL_SOCKET_IFNAME");
  spcclNetInitArgs_v2_t args{pluginLogger, ifname.c_str(),
                             static_cast<int>(knobInt("SPCCL_TIMEOUT_MS"))};
  // A transport that cannot start (ib on a host with no RDMA device) is an
  // error, not a silent change of transport: whoever named it expects its
  // performance. The plugin's reason comes through its error text.
  clearThreadLastError();
  spcclResult_t res = table->init(&args);
  if (res != spcclSuccess) {
    const std::string why = threadLastError().empty()
                                ? std::string("its init returned ") + spcclGetErrorString(res)
                                : threadLastError();
    return SPCCL_FAIL(res, "transport %s cannot start on this host: %s", name.c_str(), why.c_str());
  }
  if (gWrapper != nullptr) table = gWrapper(table);
  ready[name] = table;
  *out = table;
  return spcclSuccess;
}

void wrapTransportsForTesting(TransportWrapper wrap) { gWrapper = wrap; }

}  // namespace spccl
