#include "real_nccl.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "base/knobs.h"
#include "base/log.h"
#include "errors.h"

namespace spccl::nccl {

namespace {

thread_local bool tInsideReal = false;

// A function of this library that nothing else defines: where it lives is
// this library, however the library was named when loaded.
void selfMarker() {}

const void* selfBase() {
  Dl_info info{};
  return dladdr(reinterpret_cast<void*>(&selfMarker), &info) != 0 ? info.dli_fbase : nullptr;
}

std::string selfPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&selfMarker), &info) == 0 || info.dli_fname == nullptr)
    return "";
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname;
}

// Whether handle is this library (installed or linked as libnccl.so.2).
bool isSelf(void* handle) {
  void* symbol = dlsym(handle, "pncclGetVersion");
  if (symbol == nullptr) symbol = dlsym(handle, "ncclGetVersion");
  Dl_info info{};
  return symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fbase == selfBase();
}

// The directories the dynamic loader would search for a library of this
// process (LD_LIBRARY_PATH, the program's RUNPATH, the system ones), then
// where CUDA installs NCCL.
std::vector<std::string> searchDirectories() {
  std::vector<std::string> dirs;
  void* program = dlopen(nullptr, RTLD_LAZY);
  Dl_serinfo size{};
  if (program != nullptr && dlinfo(program, RTLD_DI_SERINFOSIZE, &size) == 0 &&
      size.dls_size >= sizeof(Dl_serinfo)) {
    std::vector<unsigned char> storage(size.dls_size);
    auto* info = reinterpret_cast<Dl_serinfo*>(storage.data());
    info->dls_size = size.dls_size;
    info->dls_cnt = size.dls_cnt;
    if (dlinfo(program, RTLD_DI_SERINFOSIZE, info) == 0 &&
        dlinfo(program, RTLD_DI_SERINFO, info) == 0)
      for (unsigned i = 0; i < info->dls_cnt; ++i) dirs.emplace_back(info->dls_serpath[i].dls_name);
  }
  if (program != nullptr) dlclose(program);
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/lib64",
                          "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"})
    dirs.emplace_back(dir);
  return dirs;
}

// dlopen(name) unless it is this library; on failure *why says so.
void* openOther(const std::string& name, std::string* why) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    *why += "\n  " + name + ": " + (error != nullptr ? error : "dlopen failed");
    return nullptr;
  }
  if (isSelf(handle)) {
    dlclose(handle);
    *why += "\n  " + name + ": is libspccl_nccl.so itself";
    return nullptr;
  }
  return handle;
}

void* findRealNccl(std::string* path, std::string* why) {
  const std::string named = knobString("SPCCL_NCCL_LIB");
  if (!named.empty()) {
    *path = named;
    return openOther(named, why);
  }
  *path = "libnccl.so.2";
  if (void* handle = openOther(*path, why)) return handle;
  // libnccl.so.2 by name is this library: look in each directory for
  // another file of that name.
  const std::string self = selfPath();
  for (const std::string& dir : searchDirectories()) {
    const std::string candidate = dir + "/libnccl.so.2";
    if (access(candidate.c_str(), R_OK) != 0) continue;
    char resolved[PATH_MAX];
    if (realpath(candidate.c_str(), resolved) != nullptr && self == resolved) continue;
    *path = candidate;
    if (void* handle = openOther(candidate, why)) return handle;
  }
  return nullptr;
}

// The pnccl alias (a strong symbol) where the library has one, else nccl.
void* lookUp(void* handle, const char* name) {
  void* fn = dlsym(handle, (std::string("pnccl") + name).c_str());
  return fn != nullptr ? fn : dlsym(handle, (std::string("nccl") + name).c_str());
}

const RealNccl* load() {
  std::string path, why;
  void* handle = findRealNccl(&path, &why);
  if (handle == nullptr) {
    SPCCL_WARN("NCCL interposer: no real NCCL could be loaded (SPCCL_NCCL_LIB=%s):%s",
               knobString("SPCCL_NCCL_LIB").c_str(), why.c_str());
    return nullptr;
  }
  static RealNccl real;
  real.handle = handle;
  Dl_info info{};
  void* probe = lookUp(handle, "GetVersion");
  real.path = probe != nullptr && dladdr(probe, &info) != 0 && info.dli_fname != nullptr
                  ? info.dli_fname
                  : path;
#define SPCCL_NCCL_LOOK_UP(name) \
  real.name = reinterpret_cast<decltype(real.name)>(lookUp(handle, #name));
  SPCCL_NCCL_FUNCTIONS(SPCCL_NCCL_LOOK_UP)
#undef SPCCL_NCCL_LOOK_UP
#define SPCCL_NCCL_LOOK_UP_TYPED(name, type) \
  real.name = reinterpret_cast<type>(lookUp(handle, #name));
  SPCCL_NCCL_DEVICE_FUNCTIONS(SPCCL_NCCL_LOOK_UP_TYPED)
#undef SPCCL_NCCL_LOOK_UP_TYPED
  if (real.GetVersion == nullptr || callReal(real.GetVersion, &real.version) != ncclSuccess) {
    SPCCL_WARN("NCCL interposer: %s has no working ncclGetVersion; not using it",
               real.path.c_str());
    return nullptr;
  }
  SPCCL_INFO(kLogInit, "NCCL interposer: forwarding to the real NCCL %d at %s%s%s", real.version,
             real.path.c_str(), why.empty() ? "" : "; passed over:", why.c_str());
  return &real;
}

}  // namespace

const RealNccl* realNccl() {
  static std::once_flag once;
  static const RealNccl* real = nullptr;
  std::call_once(once, [] { real = load(); });
  return real;
}

bool insideRealNccl() { return tInsideReal; }

InsideRealNccl::InsideRealNccl() : previous_(tInsideReal) { tInsideReal = true; }
InsideRealNccl::~InsideRealNccl() { tInsideReal = previous_; }

ncclResult_t missingReal(const char* function) {
  const RealNccl* real = realNccl();
  return fail(nullptr, ncclInvalidUsage, "%s: the real NCCL %d at %s does not have it", function,
              real != nullptr ? real->version : 0, real != nullptr ? real->path.c_str() : "?");
}

}  // namespace spccl::nccl
