// GPUDirect RDMA in the ib plugin, without a GPU or an RDMA device (neither
// exists where these tests run): the decision of which memory a device
// registers (decideGdrSupport over temporary sysfs trees with real files,
// and the dma-buf probe's possible outcomes), the refusals that name the
// type and the device, and the exported table's regMr/regMrDmaBuf refusing
// bad arguments on a host where init found no device. No GPU memory is
// registered here.
#ifdef SPCCL_HAVE_IB_PLUGIN
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/check.h"
#include "spccl_net.h"
#include "transports/ib/ib_gdr_support.h"

using namespace spccl::ib;
namespace fs = std::filesystem;

namespace {

// A directory standing in for /sys, removed at the end of the test.
class FakeSysfs {
 public:
  FakeSysfs() {
    static int count = 0;
    root_ = fs::path(::testing::TempDir()) /
            ("spccl_ib_gdr_sysfs_" + std::to_string(getpid()) + "_" + std::to_string(count++));
    fs::remove_all(root_);
    fs::create_directories(root_ / "module");
  }
  ~FakeSysfs() { fs::remove_all(root_); }
  void addFile(const std::string& relative) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << "1.0\n";
  }
  void addDirectory(const std::string& relative) { fs::create_directories(root_ / relative); }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

constexpr DmaBufProbe kNoFunction{false, 0};
constexpr DmaBufProbe kDmaBufAccepted{true, EBADF};  // fd -1 refused for being -1: supported
constexpr DmaBufProbe kDmaBufRefused{true, EOPNOTSUPP};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(IbGdrSupport, NoModuleAndNoDmaBufMeansHostMemoryOnly) {
  FakeSysfs sysfs;
  sysfs.addDirectory("module/ib_core");  // an unrelated module
  GdrSupport support = decideGdrSupport(sysfs.root(), kNoFunction, 1);
  EXPECT_EQ(support.ptrSupport, SPCCL_PTR_HOST);
  EXPECT_TRUE(has(support.reason, "no peer-memory module")) << support.reason;
  EXPECT_TRUE(has(support.reason, sysfs.root() + "/module/nvidia_peermem/version"))
      << support.reason;
  EXPECT_TRUE(has(support.reason, "libibverbs has no ibv_reg_dmabuf_mr")) << support.reason;
}

TEST(IbGdrSupport, NvidiaPeermemGivesCudaPointers) {
  FakeSysfs sysfs;
  sysfs.addFile("module/nvidia_peermem/version");
  GdrSupport support = decideGdrSupport(sysfs.root(), kDmaBufRefused, 1);
  EXPECT_EQ(support.ptrSupport, SPCCL_PTR_HOST | SPCCL_PTR_CUDA);
  EXPECT_TRUE(has(support.reason,
                  "nvidia_peermem is loaded (" + sysfs.root() + "/module/nvidia_peermem/version)"))
      << support.reason;
}

// NCCL tests the module's version file, not the directory.
TEST(IbGdrSupport, ModuleDirectoryWithoutVersionFileIsNotPeerMemory) {
  FakeSysfs sysfs;
  sysfs.addDirectory("module/nvidia_peermem");
  EXPECT_EQ(decideGdrSupport(sysfs.root(), kNoFunction, 1).ptrSupport, SPCCL_PTR_HOST);
}

TEST(IbGdrSupport, LegacyNvPeerMemGivesCudaPointers) {
  for (const char* file :
       {"kernel/mm/memory_peers/nv_mem/version", "kernel/mm/memory_peers/nv_mem_nc/version"}) {
    FakeSysfs sysfs;
    sysfs.addFile(file);
    GdrSupport support = decideGdrSupport(sysfs.root(), kNoFunction, 1);
    EXPECT_EQ(support.ptrSupport, SPCCL_PTR_HOST | SPCCL_PTR_CUDA) << file;
    EXPECT_TRUE(has(support.reason, "nv_peer_mem")) << support.reason;
    EXPECT_TRUE(has(support.reason, sysfs.root() + "/" + file)) << support.reason;
  }
}

TEST(IbGdrSupport, DmaBufFollowsTheProbesErrno) {
  FakeSysfs sysfs;  // no peer memory: only the dma-buf bit varies
  GdrSupport accepted = decideGdrSupport(sysfs.root(), kDmaBufAccepted, 1);
  EXPECT_EQ(accepted.ptrSupport, SPCCL_PTR_HOST | SPCCL_PTR_DMABUF);
  EXPECT_TRUE(has(accepted.reason, "failed with errno " + std::to_string(EBADF)))
      << accepted.reason;
  EXPECT_EQ(decideGdrSupport(sysfs.root(), {true, 0}, 1).ptrSupport,
            SPCCL_PTR_HOST | SPCCL_PTR_DMABUF);  // the dummy call succeeded: not a refusal
  GdrSupport refused = decideGdrSupport(sysfs.root(), kDmaBufRefused, 1);
  EXPECT_EQ(refused.ptrSupport, SPCCL_PTR_HOST);
  EXPECT_TRUE(has(refused.reason, "not supported by this HCA or kernel")) << refused.reason;
  EXPECT_EQ(decideGdrSupport(sysfs.root(), {true, EPROTONOSUPPORT}, 1).ptrSupport, SPCCL_PTR_HOST);
  // Without the function, whatever errno says.
  EXPECT_EQ(decideGdrSupport(sysfs.root(), {false, EBADF}, 1).ptrSupport, SPCCL_PTR_HOST);
}

TEST(IbGdrSupport, BothWaysAtOnce) {
  FakeSysfs sysfs;
  sysfs.addFile("module/nvidia_peermem/version");
  GdrSupport support = decideGdrSupport(sysfs.root(), kDmaBufAccepted, 1);
  EXPECT_EQ(support.ptrSupport, SPCCL_PTR_HOST | SPCCL_PTR_CUDA | SPCCL_PTR_DMABUF);
  EXPECT_EQ(ptrSupportNames(support.ptrSupport), "HOST+CUDA+DMABUF");
}

TEST(IbGdrSupport, KnobZeroOrUnknownValueTurnsGpuMemoryOff) {
  FakeSysfs sysfs;
  sysfs.addFile("module/nvidia_peermem/version");
  GdrSupport off = decideGdrSupport(sysfs.root(), kDmaBufAccepted, 0);
  EXPECT_EQ(off.ptrSupport, SPCCL_PTR_HOST);
  EXPECT_TRUE(has(off.reason, "SPCCL_IB_GDR=0: GPU memory is not registered")) << off.reason;
  GdrSupport odd = decideGdrSupport(sysfs.root(), kDmaBufAccepted, 2);
  EXPECT_EQ(odd.ptrSupport, SPCCL_PTR_HOST);
  EXPECT_TRUE(has(odd.reason, "SPCCL_IB_GDR=2 (neither 0 nor 1)")) << odd.reason;
}

TEST(IbGdrSupport, TypeChecksNameCallTypeAndDevice) {
  EXPECT_EQ(checkTypeAccepted("regMr", SPCCL_PTR_HOST, SPCCL_PTR_HOST | SPCCL_PTR_CUDA),
            spcclSuccess);
  EXPECT_EQ(checkTypeAccepted("regMr", SPCCL_PTR_CUDA, SPCCL_PTR_HOST | SPCCL_PTR_CUDA),
            spcclSuccess);
  EXPECT_EQ(checkTypeAccepted("regMr", SPCCL_PTR_DMABUF, SPCCL_PTR_HOST | SPCCL_PTR_CUDA),
            spcclInvalidArgument);
  EXPECT_TRUE(has(spccl::threadLastError(),
                  "ib regMr: memory type 4 (SPCCL_PTR_DMABUF) is not accepted (regMr takes "
                  "HOST+CUDA)"))
      << spccl::threadLastError();
  // A mask of two types is not one type.
  EXPECT_EQ(
      checkTypeAccepted("regMr", SPCCL_PTR_HOST | SPCCL_PTR_CUDA, SPCCL_PTR_HOST | SPCCL_PTR_CUDA),
      spcclInvalidArgument);
  EXPECT_EQ(checkTypeAccepted("regMr", 0, SPCCL_PTR_HOST), spcclInvalidArgument);
  EXPECT_TRUE(has(spccl::threadLastError(), "memory type 0 (an unknown type)"));

  GdrSupport hostOnly{SPCCL_PTR_HOST, "peer memory: no peer-memory module"};
  EXPECT_EQ(checkDeviceSupports("regMr", SPCCL_PTR_HOST, SPCCL_PTR_HOST, "mlx5_0:1", hostOnly),
            spcclSuccess);
  EXPECT_EQ(checkDeviceSupports("regMr", SPCCL_PTR_CUDA, SPCCL_PTR_CUDA, "mlx5_0:1", hostOnly),
            spcclInvalidArgument);
  EXPECT_TRUE(has(spccl::threadLastError(),
                  "ib regMr of SPCCL_PTR_CUDA memory: device mlx5_0:1 lacks SPCCL_PTR_CUDA (it "
                  "registers HOST: peer memory: no peer-memory module)"))
      << spccl::threadLastError();
  GdrSupport peerOnly{SPCCL_PTR_HOST | SPCCL_PTR_CUDA, "dma-buf: refused"};
  EXPECT_EQ(
      checkDeviceSupports("regMrDmaBuf", SPCCL_PTR_CUDA, SPCCL_PTR_DMABUF, "mlx5_1:1", peerOnly),
      spcclInvalidArgument);
  EXPECT_TRUE(has(spccl::threadLastError(), "device mlx5_1:1 lacks SPCCL_PTR_DMABUF"))
      << spccl::threadLastError();
}

// The exported table on this host: init finds no RDMA device, so no comm
// exists. Arguments are checked before a comm is touched, which the calls
// below rely on: `untouched` is not a comm and must not be read.
class IbPluginRegistration : public ::testing::Test {
 protected:
  void SetUp() override {
    plugin_ = dlopen(SPCCL_NET_IB_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(plugin_, nullptr) << dlerror();
    net_ = static_cast<const spcclNet_v2_t*>(dlsym(plugin_, SPCCL_NET_PLUGIN_SYMBOL));
    ASSERT_NE(net_, nullptr);
    lastError_ = reinterpret_cast<const char* (*)()>(dlsym(plugin_, "spcclNetPluginLastError_v1"));
    ASSERT_NE(lastError_, nullptr);
    if (access("/sys/class/infiniband", F_OK) == 0) GTEST_SKIP() << "an RDMA device exists here";
    EXPECT_EQ(net_->init(nullptr), spcclSystemError);
  }
  void TearDown() override {
    if (plugin_ != nullptr) dlclose(plugin_);
  }
  std::string lastError() const { return lastError_(); }

  void* plugin_ = nullptr;
  const spcclNet_v2_t* net_ = nullptr;
  const char* (*lastError_)() = nullptr;
  int notAComm_ = 0;
  void* untouched = &notAComm_;
  char buffer_[256] = {};
  void* mhandle_ = nullptr;
};

TEST_F(IbPluginRegistration, RegMrRefusesNullArgumentsAndForeignTypes) {
  EXPECT_EQ(net_->regMr(nullptr, buffer_, sizeof(buffer_), SPCCL_PTR_HOST, &mhandle_),
            spcclInvalidArgument);
  EXPECT_TRUE(has(lastError(), "ib regMr: NULL comm")) << lastError();
  EXPECT_EQ(net_->regMr(untouched, buffer_, sizeof(buffer_), SPCCL_PTR_HOST, nullptr),
            spcclInvalidArgument);
  EXPECT_EQ(net_->regMr(untouched, nullptr, 16, SPCCL_PTR_HOST, &mhandle_), spcclInvalidArgument);
  EXPECT_EQ(net_->regMr(untouched, buffer_, sizeof(buffer_), SPCCL_PTR_DMABUF, &mhandle_),
            spcclInvalidArgument);
  EXPECT_TRUE(has(lastError(),
                  "memory type 4 (SPCCL_PTR_DMABUF) is not accepted (regMr takes "
                  "HOST+CUDA)"))
      << lastError();
  EXPECT_EQ(net_->regMr(untouched, buffer_, sizeof(buffer_), 0x10, &mhandle_),
            spcclInvalidArgument);
  EXPECT_TRUE(has(lastError(), "memory type 16 (an unknown type)")) << lastError();
  EXPECT_EQ(mhandle_, nullptr);
  EXPECT_EQ(net_->deregMr(nullptr, buffer_), spcclInvalidArgument);
  EXPECT_TRUE(has(lastError(), "ib deregMr: NULL comm")) << lastError();
}

TEST_F(IbPluginRegistration, RegMrDmaBufIsExportedAndRefusesBadArguments) {
  ASSERT_NE(net_->regMrDmaBuf, nullptr);  // static table: devices without dma-buf refuse by name
  EXPECT_EQ(net_->regMrDmaBuf(nullptr, buffer_, sizeof(buffer_), SPCCL_PTR_CUDA, 0, 3, &mhandle_),
            spcclInvalidArgument);
  EXPECT_TRUE(has(lastError(), "ib regMrDmaBuf: NULL comm or mhandle")) << lastError();
  EXPECT_EQ(net_->regMrDmaBuf(untouched, buffer_, sizeof(buffer_), SPCCL_PTR_CUDA, 0, 3, nullptr),
            spcclInvalidArgument);
  EXPECT_EQ(
      net_->regMrDmaBuf(untouched, buffer_, sizeof(buffer_), SPCCL_PTR_CUDA, 0, -1, &mhandle_),
      spcclInvalidArgument);
  EXPECT_TRUE(has(lastError(), "needs a dma-buf fd")) << lastError();
  EXPECT_TRUE(has(lastError(), "got fd -1")) << lastError();
  EXPECT_EQ(net_->regMrDmaBuf(untouched, buffer_, 0, SPCCL_PTR_CUDA, 0, 3, &mhandle_),
            spcclInvalidArgument);
  EXPECT_TRUE(has(lastError(), "size 0")) << lastError();
  EXPECT_EQ(net_->regMrDmaBuf(untouched, nullptr, 64, SPCCL_PTR_CUDA, 0, 3, &mhandle_),
            spcclInvalidArgument);
  EXPECT_EQ(net_->regMrDmaBuf(untouched, buffer_, sizeof(buffer_), SPCCL_PTR_HOST, 0, 3, &mhandle_),
            spcclInvalidArgument);
  EXPECT_TRUE(has(lastError(),
                  "memory type 1 (SPCCL_PTR_HOST) is not accepted (regMrDmaBuf "
                  "takes CUDA+DMABUF)"))
      << lastError();
  EXPECT_EQ(mhandle_, nullptr);
}

}  // namespace
#endif  // SPCCL_HAVE_IB_PLUGIN
