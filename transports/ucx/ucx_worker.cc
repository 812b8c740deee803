#include "transports/ucx/ucx_worker.h"

#include <sys/epoll.h>
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

Process gProcess;
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

spcclResult_t createContext(Process* p) {
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
  status = ucp_init(&params, config, &p->context);
  ucp_config_release(config);
  if (status != UCS_OK) return ucxFail("ucp_init", status);
  return spcclSuccess;
}

}  // namespace

Process* process() { return gReady ? &gProcess : nullptr; }

spcclResult_t processInit(int timeoutMs) {
  if (gReady) return spcclSuccess;
  Process& p = gProcess;
  p.timeoutMs = timeoutMs;
  SPCCL_CHECK(createContext(&p));
  p.epollFd = epoll_create1(EPOLL_CLOEXEC);
  if (p.epollFd < 0) return SPCCL_FAIL(spcclSystemError, "ucx: epoll_create1: %s", strerror(errno));
  unsigned major = 0, minor = 0, release = 0;
  ucp_get_version(&major, &minor, &release);
  SPCCL_INFO(kLogNet, "ucx transport: UCX %u.%u.%u, one worker per connection, UCX_TLS=%s", major,
             minor, release, getenv("UCX_TLS") != nullptr ? getenv("UCX_TLS") : "(default)");
  gReady = true;
  return spcclSuccess;
}

spcclResult_t CommWorker::create() {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE | UCP_WORKER_PARAM_FIELD_FLAGS;
  params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  // destroy() drops requests on purpose (see ucx_worker.h): no warning per request.
  params.flags = UCP_WORKER_FLAG_IGNORE_REQUEST_LEAK;
  ucs_status_t status = ucp_worker_create(gProcess.context, &params, &worker_);
  if (status != UCS_OK) {
    worker_ = nullptr;
    return ucxFail("ucp_worker_create", status);
  }
  status = ucp_worker_get_efd(worker_, &wakeupFd_);
  if (status == UCS_OK) status = ucp_worker_get_address(worker_, &address_, &addressLength_);
  if (status != UCS_OK) {
    destroy();
    return ucxFail("ucp_worker_get_efd/address", status);
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = this;
  if (epoll_ctl(gProcess.epollFd, EPOLL_CTL_ADD, wakeupFd_, &event) != 0) {
    const int error = errno;
    destroy();
    return SPCCL_FAIL(spcclSystemError, "ucx: epoll_ctl: %s", strerror(error));
  }
  gProcess.workers.push_back(this);
  return spcclSuccess;
}

void CommWorker::destroy() {
  if (worker_ == nullptr) return;
  auto& workers = gProcess.workers;
  workers.erase(std::remove(workers.begin(), workers.end(), this), workers.end());
  if (wakeupFd_ >= 0) epoll_ctl(gProcess.epollFd, EPOLL_CTL_DEL, wakeupFd_, nullptr);
  if (address_ != nullptr) ucp_worker_release_address(worker_, address_);
  ucp_worker_destroy(worker_);  // closes wakeupFd_ too
  worker_ = nullptr;
  address_ = nullptr;
  addressLength_ = 0;
  wakeupFd_ = -1;
  armed_ = false;
}

void CommWorker::progress() {
  if (worker_ == nullptr) return;
  for (int i = 0; i < kMaxProgressRounds; ++i) {
    if (ucp_worker_progress(worker_) == 0) break;
    armed_ = false;
  }
}

void CommWorker::arm(uint64_t seen) {
  if (worker_ == nullptr || (armed_ && gProcess.completions == seen)) return;
  // UCS_ERR_BUSY also means "the wake-up fd had fired" (arm consumes that),
  // so progress and try again; signalling at once would spin forever.
  for (int attempt = 0; attempt < kArmAttempts; ++attempt) {
    progress();
    if (ucp_worker_arm(worker_) != UCS_ERR_BUSY) {
      if (gProcess.completions == seen) {
        armed_ = true;
        return;
      }
      break;
    }
  }
  ucp_worker_signal(worker_);  // the engine has something to look at now
}

void progressSignalled() {
  epoll_event events[64];
  const int ready = epoll_wait(gProcess.epollFd, events, 64, 0);
  for (int i = 0; i < ready; ++i) {
    auto* w = static_cast<CommWorker*>(events[i].data.ptr);
    w->armed_ = false;  // its fd stays readable until armed again
    w->progress();
  }
}

void armAll(uint64_t seen) {
  for (CommWorker* w : gProcess.workers)
    if (!w->armed_) w->arm(seen);
  // Something finished (a comm failed, say) without any worker's doing:
  // one signalled fd wakes the engine.
  if (gProcess.completions != seen && !gProcess.workers.empty())
    ucp_worker_signal(gProcess.workers.front()->worker_);
}

void addComm(void* comm) { gProcess.comms.push_back(comm); }

void removeComm(void* comm) {
  auto& comms = gProcess.comms;
  comms.erase(std::remove(comms.begin(), comms.end(), comm), comms.end());
}

std::vector<void*> commsDueForSweep() {
  int64_t now = monotonicMs();
  if (now - gProcess.lastSweepMs < kSweepMs) return {};
  gProcess.lastSweepMs = now;
  return gProcess.comms;
}

}  // namespace spccl::ucx
