// An emulated CUDA driver (libcuda.so.1) for testing spccl's stream and
// staging LOGIC where no GPU exists (CI). It is not a GPU and proves
// nothing about one: "device memory" is host memory the emulation marks as
// such, a stream is a thread that runs its queue in order, a host function
// runs on that thread. What it can show: that spccl finds each buffer's
// kind, orders its copies and its call on the stream, holds the stream
// until the call ran, reports failures found after the return, and
// releases everything (tests/cuda_emulation/README.md). tests/gpu is what
// runs on a real GPU.
//
// Only the entry points spccl resolves (src/device/cuda_driver.cc) plus a
// few emuCuda* helpers for the tests (emulated_driver.h) are provided.
#include "emulated_driver.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver_results.h"
#include "emulated_bucket_kernels.h"
#include "emulated_codec_kernels.h"
#include "emulated_devices.h"
#include "emulated_row_kernels.h"
#include "emulated_sparse_kernels.h"
#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/device_reduce/reduce_inputs.h"

namespace {

using spccl::emulation::CuResult;
using spccl::emulation::kIllegalAddress;
using spccl::emulation::kInvalidContext;
using spccl::emulation::kInvalidHandle;
using spccl::emulation::kInvalidValue;
using spccl::emulation::kPeerAccessUnsupported;
using spccl::emulation::kSuccess;

// CUpointer_attribute / CUmemorytype values of the driver ABI.
constexpr int kAttributeContext = 1;
constexpr int kAttributeMemoryType = 2;
constexpr int kAttributeIsManaged = 8;
constexpr int kAttributeDeviceOrdinal = 9;
constexpr unsigned kMemoryTypeHost = 1;
constexpr unsigned kMemoryTypeDevice = 2;

using spccl::emulation::emulatedPeerAccess;
using spccl::emulation::kMaxEmulatedDevices;

// One context per device (its primary context), a token each.
int gContextTokens[kMaxEmulatedDevices] = {};
void* contextOf(int device) { return &gContextTokens[device]; }
// -1 for what is no context.
int deviceOf(const void* context) {
  for (int d = 0; d < kMaxEmulatedDevices; ++d)
    if (context == contextOf(d)) return d;
  return -1;
}
thread_local void* tCurrent = nullptr;
thread_local std::vector<void*> tPushed;  // what each cuCtxPushCurrent replaced
// The device emuCudaSetCurrent makes current on this thread, and the last
// one any thread chose (the NULL stream's).
thread_local int tDevice = 0;
std::atomic<int> gProcessDevice{0};

// The context new memory and streams belong to: the current one, else
// this thread's chosen device's.
void* creatingContext() { return tCurrent != nullptr ? tCurrent : contextOf(tDevice); }

enum class Kind { Device, PinnedHost, Managed };
// Device memory is a shared mapping of a memfd, so that another process
// can map it too (the IPC handles: /proc/<pid>/fd/<fd> of the owner).
struct Allocation {
  size_t bytes;
  Kind kind;
  int device = 0;       // the owner's device (device and managed memory)
  int fd = -1;          // device memory of this process: its memfd
  uint32_t serial = 0;  // in its IPC handle: a later memfd may reuse the fd number
  bool opened = false;  // a peer's device memory, mapped by cuIpcOpenMemHandle
};

// What cuIpcGetMemHandle writes into the 64 bytes of a CUipcMemHandle.
struct IpcHandle {
  uint32_t magic;
  int32_t pid;
  int32_t fd;
  uint32_t serial;
  uint64_t bytes;
  int32_t device;
  unsigned char unused[36];
};
static_assert(sizeof(IpcHandle) == 64, "CUipcMemHandle is 64 bytes");
constexpr uint32_t kIpcMagic = 0x49554d45;  // "EMUI"

// A stream: its operations run in order on a thread of their own.
class Stream {
 public:
  // context nullptr: the NULL stream, whose work runs in the context of
  // the process's last chosen device.
  explicit Stream(void* context) : context_(context), thread_([this] { run(); }) {}
  void* context() const { return context_ != nullptr ? context_ : contextOf(gProcessDevice); }
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void enqueue(std::function<void()> op) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(op));
      ++enqueued_;
    }
    cv_.notify_all();
  }
  void synchronize() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t target = enqueued_;
    cv_.wait(lock, [&] { return done_ >= target; });
  }
  // An event's mark (cuEventRecord): the work enqueued so far.
  uint64_t enqueued() {
    std::lock_guard<std::mutex> lock(mutex_);
    return enqueued_;
  }
  bool reached(uint64_t mark) {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_ >= mark;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto op = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      tCurrent = context();
      op();
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  uint64_t enqueued_ = 0, done_ = 0;
  bool stopping_ = false;
  void* context_;
  std::thread thread_;
};

// A gate on work enqueued on streams (emuCudaCloseCopyGate's copies,
// emuCudaCloseDeviceCopyGate's, emuCudaCloseLaunchGate's kernels). What
// is enqueued while it is closed takes a ticket; those past `passing`
// wait for it to open.
struct StreamGate {
  std::mutex mutex;
  std::condition_variable cv;
  bool closed = false;
  uint64_t passing = 0;
  uint64_t issued = 0;

  // At enqueue: whether this work must wait.
  bool takeTicket() {
    std::lock_guard<std::mutex> lock(mutex);
    return closed && issued++ >= passing;
  }
  void waitOpen() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait_for(lock, std::chrono::seconds(10), [this] { return !closed; });
  }
};

// emuCudaFailLaunchesAfter's (and the copies') failures: `passing` more
// calls succeed, then `failing` fail. Under State's mutex.
struct Failures {
  int failing = 0;
  uint64_t passing = 0;

  // Whether this call fails.
  bool take() {
    if (failing > 0 && passing > 0) {
      --passing;
      return false;
    }
    if (failing == 0) return false;
    --failing;
    return true;
  }
};

// A CUevent: complete once its stream has run what was enqueued before
// the last cuEventRecord (at once where the stream was idle, or is gone).
// Never recorded: complete, as with the driver.
struct Event {
  void* stream = nullptr;  // the handle it was recorded on
  uint64_t mark = 0;
  bool recorded = false;
};

struct State {
  std::mutex mutex;
  StreamGate copyGate;
  std::map<uintptr_t, Allocation> allocations;  // by start address
  std::map<void*, std::unique_ptr<Stream>> streams;
  std::unique_ptr<Stream> legacy = std::make_unique<Stream>(nullptr);  // the NULL stream
  EmuCudaCounters counters{};
  Failures launchFailures;       // emuCudaFailLaunchesAfter
  Failures copyFailures;         // emuCudaFailMemcpyAsyncAfter
  Failures toHostFailures;       // emuCudaFailCopiesToHostAfter
  Failures allocFailures;        // emuCudaFailMemAllocs
  Failures streamAllocFailures;  // emuCudaFailStreamAllocsAfter
  bool allocsHeld = false;       // emuCudaHoldMemAllocs
  int allocsWaiting = 0;
  std::condition_variable allocsReleased;
  StreamGate deviceCopyGate;  // emuCudaCloseDeviceCopyGate
  StreamGate launchGate;      // emuCudaCloseLaunchGate
  std::map<void*, std::unique_ptr<Event>> events;
};

State& state() {
  static auto* s = new State();  // never destroyed: streams may outlive exit handlers
  return *s;
}

// The allocation holding [address, address + bytes), or nullptr.
const Allocation* find(uintptr_t address, size_t bytes, uintptr_t* start) {
  State& s = state();
  auto it = s.allocations.upper_bound(address);
  if (it == s.allocations.begin()) return nullptr;
  --it;
  if (address + bytes > it->first + it->second.bytes) return nullptr;
  if (start != nullptr) *start = it->first;
  return &it->second;
}

Stream* streamOf(void* handle) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (handle == nullptr) return s.legacy.get();
  auto it = s.streams.find(handle);
  return it == s.streams.end() ? nullptr : it->second.get();
}

// A copy touching emulated device memory must stay inside one allocation.
CuResult checkDevice(uint64_t address, size_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  const Allocation* a = find(static_cast<uintptr_t>(address), bytes, nullptr);
  return a != nullptr && a->kind != Kind::PinnedHost ? kSuccess : kInvalidValue;
}

// Whether a kernel running on `device` may touch [address, +bytes): memory
// of that device, or of a peer device it can access and whose memory was
// opened through IPC (the driver enables peer access lazily there); any
// other device's memory faults, as a GPU would without peer access.
CuResult checkKernelAccess(uint64_t address, size_t bytes, int device) {
  std::lock_guard<std::mutex> lock(state().mutex);
  const Allocation* a = find(static_cast<uintptr_t>(address), bytes, nullptr);
  if (a == nullptr || a->kind == Kind::PinnedHost) return kInvalidValue;
  if (a->device == device) return kSuccess;
  return a->opened && emulatedPeerAccess(device, a->device) ? kSuccess : kIllegalAddress;
}

bool isPinned(const void* host, size_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  const Allocation* a = find(reinterpret_cast<uintptr_t>(host), bytes, nullptr);
  return a != nullptr && a->kind == Kind::PinnedHost;
}

// As the driver does with pageable host memory (memory it did not pin): an
// asynchronous copy from it takes the bytes at once, one into it returns
// only when done. Copies from and to pinned memory run in stream order.
CuResult enqueueCopy(void* handle, void* to, const void* from, size_t bytes, bool toDevice) {
  Stream* stream = streamOf(handle);
  if (stream == nullptr) return kInvalidHandle;
  const bool pageable = !isPinned(toDevice ? from : to, bytes);
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    ++(toDevice ? state().counters.copiesToDevice : state().counters.copiesFromDevice);
    (toDevice ? state().counters.bytesToDevice : state().counters.bytesFromDevice) += bytes;
    if (pageable)
      ++(toDevice ? state().counters.copiesToDeviceFromPageable
                  : state().counters.copiesFromDeviceToPageable);
  }
  const bool gated = !toDevice && state().copyGate.takeTicket();
  if (gated) {
    stream->enqueue([to, from, bytes] {
      state().copyGate.waitOpen();
      if (bytes > 0) std::memcpy(to, from, bytes);
    });
    if (pageable) stream->synchronize();
    return kSuccess;
  }
  if (toDevice && pageable) {
    auto snapshot = std::make_shared<std::vector<unsigned char>>(
        static_cast<const unsigned char*>(from), static_cast<const unsigned char*>(from) + bytes);
    // A copy of 0 bytes is fine for the driver; memcpy from an empty
    // vector's data() (nullptr) is not.
    stream->enqueue([to, snapshot] {
      if (!snapshot->empty()) std::memcpy(to, snapshot->data(), snapshot->size());
    });
    return kSuccess;
  }
  stream->enqueue([to, from, bytes, toDevice] {
    // A copy of 0 bytes is fine for the driver, with a null pointer too;
    // memcpy's arguments must not be null even then.
    if (bytes > 0) std::memcpy(to, from, bytes);
    if (!toDevice) return;
    std::lock_guard<std::mutex> lock(state().mutex);
    ++state().counters.copiesToDeviceDone;
  });
  if (!toDevice && pageable) stream->synchronize();
  return kSuccess;
}

// ---- kernels: a host stand-in for spccl's fatbin ----
//
// THIS EMULATES THE GPU. cuModuleLoadData accepts any image and
// cuLaunchKernel runs, in stream order on the stream's thread, a HOST
// implementation of the kernel its name names (reduce_inputs.h's
// reduceInputsAt, the element code the .cu file also uses). It proves the
// device all-reduce's SCHEDULE (handles, offsets, blocks, barriers, stream
// order), not the CUDA kernel: that runs only on a GPU (tests/gpu).

int gModuleToken = 0;

// A kernel name, kept for the function handle's lifetime (the process's).
struct EmulatedFunction {
  std::string name;
};

template <typename Format>
bool runReduceWithOp(const std::string& op,
                     const spccl::kernels::device_reduce::ReduceInputsArgs& args) {
  namespace k = spccl::kernels;
  namespace dr = spccl::kernels::device_reduce;
  auto each = [&](auto opTag) {
    using Op = decltype(opTag);
    for (size_t i = 0; i < args.count; ++i) dr::reduceInputsAt<Format, Op>(args, i);
    return true;
  };
  if (op == "sum") return each(k::SumOp{});
  if (op == "prod") return each(k::ProdOp{});
  if (op == "max") return each(k::MaxOp{});
  if (op == "min") return each(k::MinOp{});
  return false;
}

// The type and op a kernel name names ("spcclReduceInputs_f32_sum");
// false for a name no kernel has.
bool parseKernel(const std::string& name, spcclDataType_t* type, std::string* op) {
  namespace dr = spccl::kernels::device_reduce;
  const std::string prefix = dr::kKernelPrefix;
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string rest = name.substr(prefix.size());
  const size_t cut = rest.find('_');
  if (cut == std::string::npos) return false;
  *op = rest.substr(cut + 1);
  if (*op != "sum" && *op != "prod" && *op != "max" && *op != "min") return false;
  for (int t = 0; t < spcclNumTypes; ++t) {
    const char* suffix = dr::typeSuffix(static_cast<spcclDataType_t>(t));
    if (suffix != nullptr && rest.substr(0, cut) == suffix) {
      *type = static_cast<spcclDataType_t>(t);
      return true;
    }
  }
  return false;
}

size_t elementBytes(spcclDataType_t type) {
  return spccl::kernels::withFormat(
      type, size_t{0}, [](auto format) { return sizeof(typename decltype(format)::Storage); });
}

void runEmulatedKernel(spcclDataType_t type, const std::string& op,
                       const spccl::kernels::device_reduce::ReduceInputsArgs& args) {
  spccl::kernels::withFormat(
      type, false, [&](auto format) { return runReduceWithOp<decltype(format)>(op, args); });
}

// A launch that passed its checks: fails as emuCudaFailLaunches asked,
// else counted.
CuResult countLaunch() {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (state().launchFailures.take()) return 719;  // CUDA_ERROR_LAUNCH_FAILED
  ++state().counters.kernelLaunches;
  return kSuccess;
}

// A row kernel's launch that succeeded, by its word width (16, 4 or 1:
// prepareRowKernel refuses others).
void countRowWords(uint64_t wordBytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  EmuCudaCounters& c = state().counters;
  ++(wordBytes == 16  ? c.rowLaunchesOf16ByteWords
     : wordBytes == 4 ? c.rowLaunchesOf4ByteWords
                      : c.rowLaunchesOfBytes);
}

// A counted launch's kernel on its stream, held at emuCudaCloseLaunchGate's
// gate when that says so.
void enqueueKernel(Stream* stream, std::function<void()> kernel) {
  const bool gated = state().launchGate.takeTicket();
  stream->enqueue([kernel = std::move(kernel), gated] {
    if (gated) state().launchGate.waitOpen();
    kernel();
  });
}

// The sparse all-reduce's kernels (emulated_sparse_kernels.h) and the
// token all-reduces' (emulated_row_kernels.h): `prepare` checks the launch
// and gives the host stand-in.
using PrepareKernel = CuResult (*)(const std::string&, unsigned, unsigned, void**,
                                   const spccl::emulation::KernelAccess&, std::function<void()>*);
CuResult launchStandIn(PrepareKernel prepare, const std::string& name, unsigned gridX,
                       unsigned blockX, Stream* stream, void** params) {
  const int device = deviceOf(stream->context());
  std::function<void()> work;
  const CuResult prepared = prepare(
      name, gridX, blockX, params,
      [device](uint64_t address, size_t bytes) {
        return checkKernelAccess(address, bytes, device);
      },
      &work);
  if (prepared != kSuccess) return prepared;
  if (const CuResult r = countLaunch(); r != kSuccess) return r;
  enqueueKernel(stream, std::move(work));
  return kSuccess;
}

}  // namespace

extern "C" {

CuResult cuModuleLoadData(void** module, const void* image) {
  if (image == nullptr) return kInvalidValue;
  if (tCurrent == nullptr) return kInvalidContext;
  *module = &gModuleToken;
  return kSuccess;
}

CuResult cuModuleGetFunction(void** function, void* module, const char* name) {
  if (module != &gModuleToken) return kInvalidHandle;
  spcclDataType_t type{};
  std::string op;
  if (!parseKernel(name, &type, &op) && !spccl::emulation::isSparseKernel(name) &&
      !spccl::emulation::isBucketKernel(name) && !spccl::emulation::isRowKernel(name) &&
      !spccl::emulation::isCodecKernel(name))
    return 500;                            // CUDA_ERROR_NOT_FOUND
  *function = new EmulatedFunction{name};  // one per lookup; spccl caches them
  return kSuccess;
}

// kernelParams[0] is the one ReduceInputsArgs, copied at launch as the
// driver copies kernel parameters.
CuResult cuLaunchKernel(void* function, unsigned gridX, unsigned /*gridY*/, unsigned /*gridZ*/,
                        unsigned blockX, unsigned /*blockY*/, unsigned /*blockZ*/,
                        unsigned /*sharedBytes*/, void* handle, void** params, void** /*extra*/) {
  Stream* stream = streamOf(handle);
  if (stream == nullptr) return kInvalidHandle;
  if (function == nullptr || params == nullptr || gridX == 0 || blockX == 0) return kInvalidValue;
  const std::string& name = static_cast<EmulatedFunction*>(function)->name;
  if (spccl::emulation::isSparseKernel(name))
    return launchStandIn(spccl::emulation::prepareSparseKernel, name, gridX, blockX, stream,
                         params);
  if (spccl::emulation::isBucketKernel(name)) {
    const CuResult launched =
        launchStandIn(spccl::emulation::prepareBucketKernel, name, gridX, blockX, stream, params);
    if (launched == kSuccess) {
      std::lock_guard<std::mutex> lock(state().mutex);
      ++state().counters.bucketLaunches;
    }
    return launched;
  }
  if (spccl::emulation::isRowKernel(name)) {
    const CuResult launched =
        launchStandIn(spccl::emulation::prepareRowKernel, name, gridX, blockX, stream, params);
    if (launched == kSuccess) countRowWords(spccl::emulation::rowKernelWordBytes(params));
    return launched;
  }
  if (spccl::emulation::isCodecKernel(name))
    return launchStandIn(spccl::emulation::prepareCodecKernel, name, gridX, blockX, stream, params);
  spcclDataType_t type{};
  std::string op;
  if (!parseKernel(name, &type, &op)) return kInvalidValue;
  spccl::kernels::device_reduce::ReduceInputsArgs args{};
  std::memcpy(&args, params[0], sizeof(args));
  if (args.inputCount < 1 || args.inputCount > spccl::kernels::device_reduce::kMaxInputs)
    return kInvalidValue;
  // Every pointer must lie in emulated device memory the stream's device
  // reaches, as a GPU would fault (reported here at launch, not later).
  const size_t bytes = args.count * elementBytes(type);
  const int device = deviceOf(stream->context());
  for (int k = 0; k < args.inputCount; ++k)
    if (const CuResult r = checkKernelAccess(args.inputs[k], bytes, device); r != kSuccess)
      return r;
  if (const CuResult r = checkKernelAccess(args.output, bytes, device); r != kSuccess) return r;
  if (const CuResult r = countLaunch(); r != kSuccess) return r;
  enqueueKernel(stream, [type, op, args] { runEmulatedKernel(type, op, args); });
  return kSuccess;
}

// ---- the driver's entry points spccl uses ----

// Like the driver: memory it does not know gets the default values (type 0,
// no context) and CUDA_SUCCESS; an attribute it does not serve fails.
CuResult cuPointerGetAttributes(unsigned count, int* attributes, void** data, uint64_t pointer) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const Allocation* a = find(static_cast<uintptr_t>(pointer), 1, nullptr);
  for (unsigned i = 0; i < count; ++i) {
    switch (attributes[i]) {
      case kAttributeMemoryType:
        *static_cast<unsigned*>(data[i]) =
            a == nullptr ? 0 : (a->kind == Kind::PinnedHost ? kMemoryTypeHost : kMemoryTypeDevice);
        break;
      case kAttributeIsManaged:
        *static_cast<unsigned*>(data[i]) = a != nullptr && a->kind == Kind::Managed ? 1 : 0;
        break;
      case kAttributeDeviceOrdinal:
        *static_cast<int*>(data[i]) = a == nullptr ? -2 : a->device;
        break;
      case kAttributeContext:
        *static_cast<void**>(data[i]) = a == nullptr ? nullptr : contextOf(a->device);
        break;
      default:
        return kInvalidValue;
    }
  }
  return kSuccess;
}

CuResult cuMemcpyDtoH_v2(void* dst, uint64_t src, size_t bytes) {
  if (checkDevice(src, bytes) != kSuccess) return kInvalidValue;
  CuResult r = enqueueCopy(nullptr, dst, reinterpret_cast<const void*>(src), bytes, false);
  if (r == kSuccess) streamOf(nullptr)->synchronize();
  return r;
}

CuResult cuMemcpyHtoD_v2(uint64_t dst, const void* src, size_t bytes) {
  if (checkDevice(dst, bytes) != kSuccess) return kInvalidValue;
  CuResult r = enqueueCopy(nullptr, reinterpret_cast<void*>(dst), src, bytes, true);
  if (r == kSuccess) streamOf(nullptr)->synchronize();
  return r;
}

CuResult cuMemcpyDtoHAsync_v2(void* dst, uint64_t src, size_t bytes, void* stream) {
  if (checkDevice(src, bytes) != kSuccess) return kInvalidValue;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (state().toHostFailures.take()) return kInvalidValue;
  }
  return enqueueCopy(stream, dst, reinterpret_cast<const void*>(src), bytes, false);
}

CuResult cuMemcpyHtoDAsync_v2(uint64_t dst, const void* src, size_t bytes, void* stream) {
  if (checkDevice(dst, bytes) != kSuccess) return kInvalidValue;
  return enqueueCopy(stream, reinterpret_cast<void*>(dst), src, bytes, true);
}

// Between any two pointers (unified addressing): device to device, or
// either direction with the host.
CuResult cuMemcpyAsync(uint64_t dst, uint64_t src, size_t bytes, void* stream) {
  const bool toDevice = checkDevice(dst, bytes) == kSuccess;
  const bool fromDevice = checkDevice(src, bytes) == kSuccess;
  if (!toDevice && !fromDevice) return kInvalidValue;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (state().copyFailures.take()) return kInvalidValue;
  }
  auto* to = reinterpret_cast<void*>(dst);
  const auto* from = reinterpret_cast<const void*>(src);
  if (!(toDevice && fromDevice)) return enqueueCopy(stream, to, from, bytes, toDevice);
  Stream* s = streamOf(stream);
  if (s == nullptr) return kInvalidHandle;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    ++state().counters.copiesOnDevice;
  }
  const bool gated = state().deviceCopyGate.takeTicket();
  s->enqueue([to, from, bytes, gated] {
    if (gated) state().deviceCopyGate.waitOpen();
    if (bytes > 0) std::memcpy(to, from, bytes);
  });
  return kSuccess;
}

// ---- IPC: a peer process maps the owner's memfd ----

CuResult cuMemGetAddressRange_v2(uint64_t* base, size_t* bytes, uint64_t pointer) {
  std::lock_guard<std::mutex> lock(state().mutex);
  uintptr_t start = 0;
  const Allocation* a = find(static_cast<uintptr_t>(pointer), 1, &start);
  if (a == nullptr || a->kind == Kind::PinnedHost) return kInvalidValue;
  if (base != nullptr) *base = start;
  if (bytes != nullptr) *bytes = a->bytes;
  return kSuccess;
}

CuResult cuIpcGetMemHandle(void* handle, uint64_t pointer) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().allocations.find(static_cast<uintptr_t>(pointer));
  if (it == state().allocations.end() || it->second.fd < 0) return kInvalidValue;
  IpcHandle h{};
  h.magic = kIpcMagic;
  h.pid = getpid();
  h.fd = it->second.fd;
  h.serial = it->second.serial;
  h.bytes = it->second.bytes;
  h.device = it->second.device;
  std::memcpy(handle, &h, sizeof(h));
  return kSuccess;
}

struct IpcHandleBytes {
  unsigned char bytes[64];
};

CuResult cuIpcOpenMemHandle_v2(uint64_t* pointer, IpcHandleBytes handle, unsigned /*flags*/) {
  IpcHandle h{};
  std::memcpy(&h, handle.bytes, sizeof(h));
  if (h.magic != kIpcMagic) return kInvalidValue;
  if (h.pid == getpid()) return kInvalidContext;  // the driver refuses a process's own handle
  // Another device's memory maps only where peer access is possible
  // (cuDeviceCanAccessPeer; the emulation's choice of error).
  const int mine = deviceOf(creatingContext());
  if (!emulatedPeerAccess(mine, h.device)) return kPeerAccessUnsupported;
  const std::string path = "/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd);
  const int fd = open(path.c_str(), O_RDWR);
  if (fd < 0) return kInvalidValue;
  void* p = mmap(nullptr, h.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return kInvalidValue;
  std::lock_guard<std::mutex> lock(state().mutex);
  Allocation allocation{h.bytes, Kind::Device};
  allocation.device = h.device;
  allocation.opened = true;
  state().allocations[reinterpret_cast<uintptr_t>(p)] = allocation;
  ++state().counters.liveAllocations;
  ++state().counters.openedPeerMappings;
  *pointer = reinterpret_cast<uint64_t>(p);
  return kSuccess;
}

CuResult cuIpcCloseMemHandle(uint64_t pointer) {
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().allocations.find(static_cast<uintptr_t>(pointer));
    if (it == state().allocations.end() || !it->second.opened) return kInvalidValue;
    bytes = it->second.bytes;
    state().allocations.erase(it);
    --state().counters.liveAllocations;
    --state().counters.openedPeerMappings;
  }
  munmap(reinterpret_cast<void*>(pointer), bytes);
  return kSuccess;
}

CuResult cuMemAlloc_v2(uint64_t* pointer, size_t bytes) {
  if (tCurrent == nullptr) return kInvalidContext;
  {
    std::unique_lock<std::mutex> lock(state().mutex);
    if (state().allocFailures.take()) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
    if (state().allocsHeld) {
      ++state().allocsWaiting;
      state().allocsReleased.wait_for(lock, std::chrono::seconds(10),
                                      [] { return !state().allocsHeld; });
      --state().allocsWaiting;
    }
  }
  *pointer = reinterpret_cast<uint64_t>(emuCudaAlloc(bytes, EmuCudaDevice));
  return *pointer != 0 ? kSuccess : 2;  // CUDA_ERROR_OUT_OF_MEMORY
}

// Stream-ordered memory: allocated at once (usable by anything queued
// after), freed when the stream reaches the free.
CuResult cuMemAllocAsync(uint64_t* pointer, size_t bytes, void* handle) {
  Stream* stream = streamOf(handle);
  if (stream == nullptr) return kInvalidHandle;
  if (tCurrent == nullptr) return kInvalidContext;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (state().streamAllocFailures.take()) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  }
  *pointer = reinterpret_cast<uint64_t>(emuCudaAlloc(bytes, EmuCudaDevice));
  return *pointer != 0 ? kSuccess : 2;  // CUDA_ERROR_OUT_OF_MEMORY
}

CuResult cuMemFreeAsync(uint64_t pointer, void* handle) {
  Stream* stream = streamOf(handle);
  if (stream == nullptr) return kInvalidHandle;
  if (checkDevice(pointer, 1) != kSuccess) return kInvalidValue;
  stream->enqueue([pointer] { emuCudaFree(reinterpret_cast<void*>(pointer)); });
  return kSuccess;
}

CuResult cuMemFree_v2(uint64_t pointer) {
  return emuCudaFree(reinterpret_cast<void*>(pointer)) == 0 ? kSuccess : kInvalidValue;
}

CuResult cuCtxSetCurrent(void* context) {
  if (context != nullptr && deviceOf(context) < 0) return kInvalidContext;
  tCurrent = context;
  return kSuccess;
}

// Device management (the devices themselves: emulated_devices.cc), as
// the perf binaries' --device uses it (perf/common/device_memory.h).
CuResult cuInit(unsigned /*flags*/) { return kSuccess; }

CuResult cuDevicePrimaryCtxRetain(void** context, int device) {
  if (device < 0 || device >= spccl::emulation::emulatedDeviceCount())
    return spccl::emulation::kInvalidDevice;
  *context = contextOf(device);
  return kSuccess;
}

CuResult cuStreamCreate(void** stream, unsigned /*flags*/) {
  *stream = emuCudaStreamCreate();
  return kSuccess;
}

CuResult cuStreamDestroy_v2(void* stream) {
  emuCudaStreamDestroy(stream);
  return kSuccess;
}

CuResult cuEventCreate(void** event, unsigned /*flags*/) {
  auto made = std::make_unique<Event>();
  *event = made.get();
  std::lock_guard<std::mutex> lock(state().mutex);
  state().events[*event] = std::move(made);
  return kSuccess;
}

CuResult cuEventDestroy_v2(void* event) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().events.erase(event) == 1 ? kSuccess : kInvalidHandle;
}

CuResult cuEventRecord(void* event, void* handle) {
  Stream* stream = streamOf(handle);
  if (stream == nullptr) return kInvalidHandle;
  const uint64_t mark = stream->enqueued();
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().events.find(event);
  if (it == state().events.end()) return kInvalidHandle;
  *it->second = Event{handle, mark, true};
  return kSuccess;
}

// CUDA_SUCCESS, or CUDA_ERROR_NOT_READY (600) while the stream has not
// reached the mark.
CuResult cuEventQuery(void* event) {
  Event recorded;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().events.find(event);
    if (it == state().events.end()) return kInvalidHandle;
    recorded = *it->second;
  }
  if (!recorded.recorded) return kSuccess;
  Stream* stream = streamOf(recorded.stream);
  return stream == nullptr || stream->reached(recorded.mark) ? kSuccess : 600;
}

CuResult cuMemHostAlloc(void** pointer, size_t bytes, unsigned int /*flags*/) {
  if (tCurrent == nullptr) return kInvalidContext;
  *pointer = emuCudaAlloc(bytes, EmuCudaPinnedHost);
  return *pointer != nullptr ? kSuccess : 2;  // CUDA_ERROR_OUT_OF_MEMORY
}

CuResult cuMemFreeHost(void* pointer) {
  return emuCudaFree(pointer) == 0 ? kSuccess : kInvalidValue;
}

CuResult cuLaunchHostFunc(void* handle, void (*fn)(void*), void* userData) {
  Stream* stream = streamOf(handle);
  if (stream == nullptr) return kInvalidHandle;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    ++state().counters.hostFunctions;
  }
  stream->enqueue([fn, userData] { fn(userData); });
  return kSuccess;
}

CuResult cuStreamSynchronize(void* handle) {
  Stream* stream = streamOf(handle);
  if (stream == nullptr) return kInvalidHandle;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    ++state().counters.streamSyncs;
  }
  stream->synchronize();
  return kSuccess;
}

CuResult cuStreamGetCtx(void* handle, void** context) {
  Stream* stream = streamOf(handle);
  if (stream == nullptr) return kInvalidHandle;
  *context = stream->context();
  return kSuccess;
}

CuResult cuCtxGetCurrent(void** context) {
  *context = tCurrent;
  return kSuccess;
}

CuResult cuCtxPushCurrent_v2(void* context) {
  if (deviceOf(context) < 0) return kInvalidContext;
  tPushed.push_back(tCurrent);
  tCurrent = context;
  return kSuccess;
}

CuResult cuCtxPopCurrent_v2(void** context) {
  if (tPushed.empty()) return kInvalidContext;
  if (context != nullptr) *context = tCurrent;
  tCurrent = tPushed.back();
  tPushed.pop_back();
  return kSuccess;
}

CuResult cuCtxGetDevice(int* device) {
  if (tCurrent == nullptr) return kInvalidContext;
  *device = deviceOf(tCurrent);
  return kSuccess;
}

CuResult cuGetErrorName(CuResult error, const char** name) {
  *name = error == kSuccess ? "CUDA_SUCCESS" : "CUDA_ERROR_EMULATED";
  return kSuccess;
}

CuResult cuGetErrorString(CuResult error, const char** text) {
  *text = error == kSuccess ? "no error" : "an error of the emulated driver";
  return kSuccess;
}

// ---- for the tests (emulated_driver.h) ----

void emuCudaSetCurrent(int current) { tCurrent = current != 0 ? contextOf(tDevice) : nullptr; }

int emuCudaSetCurrentDevice(int device) {
  if (device < 0 || device >= spccl::emulation::emulatedDeviceCount()) return -1;
  tDevice = device;
  gProcessDevice = device;
  tCurrent = contextOf(device);
  return 0;
}

void* emuCudaAlloc(size_t bytes, int kind) {
  const size_t size = bytes > 0 ? bytes : 1;
  void* p = nullptr;
  int fd = -1;
  if (kind == EmuCudaDevice) {
    fd = memfd_create("emulated-cuda-device", 0);
    if (fd < 0) return nullptr;
    if (ftruncate(fd, static_cast<off_t>(size)) != 0 ||
        (p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
      close(fd);
      return nullptr;
    }
  } else {
    p = std::malloc(size);
  }
  if (p == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(state().mutex);
  Allocation allocation{size, kind == EmuCudaDevice    ? Kind::Device
                              : kind == EmuCudaManaged ? Kind::Managed
                                                       : Kind::PinnedHost};
  allocation.device = deviceOf(creatingContext());
  allocation.fd = fd;
  static uint32_t serial = 0;
  allocation.serial = ++serial;
  state().allocations[reinterpret_cast<uintptr_t>(p)] = allocation;
  ++state().counters.liveAllocations;
  if (kind == EmuCudaPinnedHost) {
    ++state().counters.pinnedAllocations;
    state().counters.pinnedBytesAllocated += bytes;
  }
  return p;
}

int emuCudaFree(void* pointer) {
  Allocation allocation{};
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().allocations.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == state().allocations.end() || it->second.opened) return -1;
    allocation = it->second;
    state().allocations.erase(it);
    --state().counters.liveAllocations;
  }
  if (allocation.fd < 0) {
    std::free(pointer);
    return 0;
  }
  munmap(pointer, allocation.bytes);
  close(allocation.fd);
  return 0;
}

void* emuCudaStreamCreate(void) {
  auto stream = std::make_unique<Stream>(creatingContext());
  void* handle = stream.get();
  std::lock_guard<std::mutex> lock(state().mutex);
  state().streams[handle] = std::move(stream);
  return handle;
}

void emuCudaStreamDestroy(void* handle) {
  std::unique_ptr<Stream> stream;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().streams.find(handle);
    if (it == state().streams.end()) return;
    stream = std::move(it->second);
    state().streams.erase(it);
  }
  stream->synchronize();
}

int emuCudaLaunch(void* handle, void (*fn)(void*), void* userData) {
  Stream* stream = streamOf(handle);
  if (stream == nullptr) return -1;
  stream->enqueue([fn, userData] { fn(userData); });
  return 0;
}

namespace {

void closeGate(StreamGate& gate, uint64_t passing) {
  std::lock_guard<std::mutex> lock(gate.mutex);
  gate.closed = true;
  gate.passing = passing;
  gate.issued = 0;
}

void openGate(StreamGate& gate) {
  std::lock_guard<std::mutex> lock(gate.mutex);
  gate.closed = false;
  gate.cv.notify_all();
}

}  // namespace

void emuCudaCloseCopyGate(uint64_t passing) { closeGate(state().copyGate, passing); }
void emuCudaOpenCopyGate(void) { openGate(state().copyGate); }
void emuCudaCloseDeviceCopyGate(uint64_t passing) { closeGate(state().deviceCopyGate, passing); }
void emuCudaOpenDeviceCopyGate(void) { openGate(state().deviceCopyGate); }
void emuCudaCloseLaunchGate(uint64_t passing) { closeGate(state().launchGate, passing); }
void emuCudaOpenLaunchGate(void) { openGate(state().launchGate); }

void emuCudaFailLaunches(int count) { emuCudaFailLaunchesAfter(0, count); }

void emuCudaFailLaunchesAfter(uint64_t passing, int count) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().launchFailures = Failures{count, passing};
}

void emuCudaFailMemcpyAsyncAfter(uint64_t passing, int count) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().copyFailures = Failures{count, passing};
}

void emuCudaFailCopiesToHostAfter(uint64_t passing, int count) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().toHostFailures = Failures{count, passing};
}

void emuCudaFailMemAllocs(int count) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().allocFailures = Failures{count, 0};
}

void emuCudaFailStreamAllocsAfter(uint64_t passing, int count) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().streamAllocFailures = Failures{count, passing};
}

void emuCudaHoldMemAllocs(int hold) {
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().allocsHeld = hold != 0;
  }
  state().allocsReleased.notify_all();
}

int emuCudaMemAllocsWaiting(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().allocsWaiting;
}

EmuCudaCounters emuCudaCounters(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().counters;
}

}  // extern "C"
