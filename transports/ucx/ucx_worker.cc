#include "transports/ucx/ucx_worker.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"
#include "transports/ucx/ucx_config_defaults.h"

namespace spccl::ucx {
namespace {

Worker gWorker;
bool gReady = false;

// Enough to drain what one wake-up brought without starving the caller.
constexpr int kMaxProgressRounds = 256;
constexpr int kArmAttempts = 4;

// UCX's shared-memory transports take their segments from /dev/shm, and
// report a full one as plain "Out of memory": say where to look.
std::string devShmHint(ucs_status_t status) {
  struct statvfs fs {};
  if (status != UCS_ERR_NO_MEMORY || statvfs("/dev/shm", &fs) != 0) return "";
  const unsigned long long freeBytes =
      static_cast<unsigned long long>(fs.f_bavail) * static_cast<unsigned long long>(fs.f_frsize);
  return " (UCX's shared-memory transports allocate in /dev/shm, which has " +
         std::to_string(freeBytes) + " bytes free)";
}

spcclResult_t ucxFail(const char* what, ucs_status_t status) {
  return SPCCL_FAIL(spcclSystemError, "ucx: %s failed: %s%s", what, ucs_status_string(status),
                    devShmHint(status).c_str());
}

spcclResult_t createContextAndWorker(Worker* w) {
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);  // UCX_* as usual
  if (status != UCS_OK) return ucxFail("ucp_config_read", status);
  for (const ConfigChange& change :
       configChanges([](const char* name) -> const char* { return std::getenv(name); })) {
    status = ucp_config_modify(config, change.name.c_str(), change.value.c_str());
    if (status != UCS_OK) {
      ucp_config_release(config);
      return ucxFail(("ucp_config_modify " + change.name).c_str(), status);
    }
    SPCCL_INFO(kLogNet, "ucx: UCX_%s=%s: %s", change.name.c_str(), change.value.c_str(),
               change.why.c_str());
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  status = ucp_init(&params, config, &w->context);
  ucp_config_release(config);
  if (status != UCS_OK) return ucxFail("ucp_init", status);

  ucp_worker_params_t wparams{};
  wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wparams.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  status = ucp_worker_create(w->context, &wparams, &w->worker);
  if (status != UCS_OK) return ucxFail("ucp_worker_create", status);
  status = ucp_worker_get_efd(w->worker, &w->wakeupFd);
  if (status != UCS_OK) return ucxFail("ucp_worker_get_efd", status);
  status = ucp_worker_get_address(w->worker, &w->address, &w->addressLength);
  if (status != UCS_OK) return ucxFail("ucp_worker_get_address", status);
  return spcclSuccess;
}

}  // namespace

Worker* worker() { return gReady ? &gWorker : nullptr; }

spcclResult_t workerInit(int timeoutMs) {
  if (gReady) return spcclSuccess;
  Worker& w = gWorker;
  w.timeoutMs = timeoutMs;
  SPCCL_CHECK(createContextAndWorker(&w));
  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_NAME;
  ucp_context_query(w.context, &attr);
  unsigned major = 0, minor = 0, release = 0;
  ucp_get_version(&major, &minor, &release);
  SPCCL_INFO(kLogNet, "ucx transport: UCX %u.%u.%u, worker address %zu bytes, UCX_TLS=%s", major,
             minor, release, w.addressLength,
             getenv("UCX_TLS") != nullptr ? getenv("UCX_TLS") : "(default)");
  gReady = true;
  return spcclSuccess;
}

void progressWorker() {
  for (int i = 0; i < kMaxProgressRounds; ++i) {
    if (ucp_worker_progress(gWorker.worker) == 0) break;
    gWorker.armed = false;
  }
}

void armWorker(uint64_t seen) {
  if (gWorker.armed && gWorker.completions == seen) return;
  // UCS_ERR_BUSY also means "the wake-up fd had fired" (arm consumes that),
  // so progress and try again; signalling at once would spin forever.
  for (int attempt = 0; attempt < kArmAttempts; ++attempt) {
    progressWorker();
    if (ucp_worker_arm(gWorker.worker) != UCS_ERR_BUSY) {
      if (gWorker.completions == seen) {
        gWorker.armed = true;
        return;
      }
      break;
    }
  }
  ucp_worker_signal(gWorker.worker);  // the engine has something to look at now
}

void addComm(void* comm) { gWorker.comms.push_back(comm); }

void removeComm(void* comm) {
  auto& comms = gWorker.comms;
  comms.erase(std::remove(comms.begin(), comms.end(), comm), comms.end());
}

std::vector<void*> commsDueForSweep() {
  int64_t now = monotonicMs();
  if (now - gWorker.lastSweepMs < kSweepMs) return {};
  gWorker.lastSweepMs = now;
  return gWorker.comms;
}

}  // namespace spccl::ucx
