#include "runtime/flight_signals.h"

#include <signal.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "base/log.h"
#include "runtime/flight_recorder.h"

namespace spccl {

namespace {

constexpr int kMaxRecorders = 64;  // live communicators with a recorder; more are not dumped
constexpr int kSignals[] = {SIGSEGV, SIGABRT, SIGBUS};
constexpr int kSignalCount = sizeof(kSignals) / sizeof(kSignals[0]);

std::atomic<FlightRecorder*> gRecorders[kMaxRecorders];
struct sigaction gPrevious[kSignalCount];
std::atomic<bool> gDumping{false};
char gBuffer[16384];  // the handler's only memory

const char* triggerName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "signal SIGSEGV";
    case SIGABRT:
      return "signal SIGABRT";
    case SIGBUS:
      return "signal SIGBUS";
    default:
      return "signal";
  }
}

void chain(int sig, siginfo_t* info, void* context) {
  int index = 0;
  while (index < kSignalCount && kSignals[index] != sig) ++index;
  if (index == kSignalCount) return;
  const struct sigaction& previous = gPrevious[index];
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
      previous.sa_handler != nullptr) {
    previous.sa_handler(sig);
    return;
  }
  // The default action: restore it and send the signal again; it is
  // blocked in here, so it takes effect when this handler returns (a
  // raise(SIGSEGV) would otherwise just go on).
  sigaction(sig, &previous, nullptr);
  raise(sig);
}

void onFatalSignal(int sig, siginfo_t* info, void* context) {
  if (!gDumping.exchange(true)) {
    const int fd = logFileDescriptor();
    for (auto& slot : gRecorders) {
      const FlightRecorder* recorder = slot.load(std::memory_order_acquire);
      if (recorder != nullptr)
        recorder->dumpFromSignal(fd, triggerName(sig), gBuffer, sizeof(gBuffer));
    }
  }
  chain(sig, info, context);
}

void installHandlers() {
  for (int i = 0; i < kSignalCount; ++i) {
    struct sigaction action {};
    action.sa_sigaction = onFatalSignal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(kSignals[i], &action, &gPrevious[i]);
  }
}

}  // namespace

void registerFlightRecorder(FlightRecorder* recorder) {
  static std::once_flag installed;
  // The log file is opened now, not in the handler.
  logFileDescriptor();
  std::call_once(installed, installHandlers);
  for (auto& slot : gRecorders) {
    FlightRecorder* empty = nullptr;
    if (slot.compare_exchange_strong(empty, recorder)) return;
  }
}

void unregisterFlightRecorder(FlightRecorder* recorder) {
  for (auto& slot : gRecorders) {
    FlightRecorder* mine = recorder;
    if (slot.compare_exchange_strong(mine, nullptr)) return;
  }
}

}  // namespace spccl
