// Communicator lifecycle: unique ids, init (explicit and from the launcher's
// environment), split, close/abort, rank/size, counters; revoke, agree,
// shrink (docs/fault-tolerance.md).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "comm_handle.h"
#include "errors.h"

namespace py = pybind11;

namespace spccl_python {

CommHandle::~CommHandle() {
  // No raising from a destructor; destroy is local and does not fail. The
  // GIL stays held: the operations complete without Python.
  if (comm_ == nullptr) return;
  for (const auto& request : pending_) request->block();
  std::lock_guard<std::mutex> lock(life_->mutex);
  life_->destroyed = true;
  spcclCommDestroy(comm_);
}

spcclComm_t CommHandle::get() const {
  if (comm_ == nullptr) {
    PyErr_SetString(py::module_::import("spccl._errors").attr("InvalidUsageError").ptr(),
                    "this communicator is closed");
    throw py::error_already_set();
  }
  return comm_;
}

std::shared_ptr<PendingRequest> CommHandle::track(spcclRequest_t request, py::object keepAlive) {
  std::erase_if(pending_, [](const auto& pending) { return pending->poll(); });
  auto pending = std::make_shared<PendingRequest>(request, life_, std::move(keepAlive));
  pending_.push_back(pending);
  return pending;
}

void CommHandle::close() {
  spcclComm_t comm = comm_;
  comm_ = nullptr;  // no new operations from here on
  if (comm == nullptr) return;
  std::vector<std::shared_ptr<PendingRequest>> pending = std::move(pending_);
  {
    py::gil_scoped_release released;  // destroy joins the engine's threads
    for (const auto& request : pending) request->block();
    std::lock_guard<std::mutex> lock(life_->mutex);
    life_->destroyed = true;
    spcclCommDestroy(comm);
  }
}

void CommHandle::abort() {
  spcclComm_t comm = comm_;
  comm_ = nullptr;
  if (comm == nullptr) return;
  std::vector<std::shared_ptr<PendingRequest>> pending = std::move(pending_);
  {
    py::gil_scoped_release released;
    std::lock_guard<std::mutex> lock(life_->mutex);
    life_->destroyed = true;
    life_->aborted = true;
    spcclCommAbort(comm);
  }
}

namespace {

// spcclConfig_t from keyword arguments; None keeps the library default
// (which the SPCCL_* variables may set). Owns the strings the struct points
// to, so it must outlive the init call.
class Config {
 public:
  Config(std::optional<int> timeoutMs, std::optional<std::string> transport,
         std::optional<std::string> socketIfname, std::optional<bool> profileLinks,
         std::optional<bool> blocking = std::nullopt)
      : transport_(std::move(transport)), socketIfname_(std::move(socketIfname)) {
    if (timeoutMs) config_.timeoutMs = *timeoutMs;
    if (blocking) config_.blocking = *blocking ? 1 : 0;
    if (transport_) config_.transport = transport_->c_str();
    if (socketIfname_) config_.socketIfname = socketIfname_->c_str();
    if (profileLinks) config_.profileLinks = *profileLinks ? 1 : 0;
  }
  const spcclConfig_t* get() const { return &config_; }

 private:
  std::optional<std::string> transport_;
  std::optional<std::string> socketIfname_;
  spcclConfig_t config_ = SPCCL_CONFIG_INITIALIZER;
};

spcclUniqueId uniqueIdFromBytes(const py::bytes& bytes) {
  std::string raw = bytes;
  if (raw.size() != SPCCL_UNIQUE_ID_BYTES)
    throw py::value_error("unique_id must be " + std::to_string(SPCCL_UNIQUE_ID_BYTES) +
                          " bytes (from spccl.unique_id()), got " + std::to_string(raw.size()));
  spcclUniqueId id;
  std::copy(raw.begin(), raw.end(), id.internal);
  return id;
}

// Raises unless result is success or spcclInProgress: a non-blocking
// creation (blocking=False) on its way, polled with Comm.async_error.
void raiseUnlessStarted(spcclResult_t result, spcclComm_t comm) {
  if (result != spcclInProgress) raiseOnError(result, comm);
}

// Init calls rendezvous with the other ranks: the GIL is released while
// they wait, and the thread's last error names what went wrong.
template <typename Init>
std::unique_ptr<CommHandle> initReleased(Init&& init) {
  spcclComm_t comm = nullptr;
  spcclResult_t result;
  {
    py::gil_scoped_release released;
    result = init(&comm);
  }
  raiseUnlessStarted(result, nullptr);
  return std::make_unique<CommHandle>(comm);
}

py::dict countersDict(const spcclCounters_t& c) {
  py::dict d;
  d["bytes_sent"] = c.bytesSent;
  d["bytes_received"] = c.bytesReceived;
  d["messages_sent"] = c.messagesSent;
  d["messages_received"] = c.messagesReceived;
  return d;
}

}  // namespace

void bindComm(py::module_& m) {
  m.def("version", [] {
    int version = 0;
    raiseOnError(spcclGetVersion(&version), nullptr);
    return version;
  });
  m.def("get_unique_id", [] {
    spcclUniqueId id;
    raiseOnError(spcclGetUniqueId(&id), nullptr);
    return py::bytes(id.internal, SPCCL_UNIQUE_ID_BYTES);
  });
  m.def("group_start", [] { raiseOnError(spcclGroupStart(), nullptr); });
  m.def("group_end", [] {
    spcclResult_t result;
    {
      py::gil_scoped_release released;  // the deferred operations run here
      result = spcclGroupEnd();
    }
    raiseOnError(result, nullptr);
  });
  m.def("type_size", [](int dtype) { return spcclTypeSize(static_cast<spcclDataType_t>(dtype)); });
  m.def("error_string",
        [](int result) { return spcclGetErrorString(static_cast<spcclResult_t>(result)); });
  m.attr("UNIQUE_ID_BYTES") = SPCCL_UNIQUE_ID_BYTES;

  py::class_<CommHandle> comm(m, "CommHandle");
  comm.def_static(
          "init_rank",
          [](const py::bytes& uniqueId, int rank, int size, std::optional<int> timeoutMs,
             std::optional<std::string> transport, std::optional<std::string> socketIfname,
             std::optional<bool> profileLinks, std::optional<bool> blocking) {
            spcclUniqueId id = uniqueIdFromBytes(uniqueId);
            Config config(timeoutMs, std::move(transport), std::move(socketIfname), profileLinks,
                          blocking);
            return initReleased([&](spcclComm_t* out) {
              return spcclCommInitRankConfig(out, size, id, rank, config.get());
            });
          },
          py::arg("unique_id"), py::arg("rank"), py::arg("size"), py::arg("timeout_ms"),
          py::arg("transport"), py::arg("socket_ifname"), py::arg("profile_links"),
          py::arg("blocking"))
      .def_static(
          "init_from_env",
          [](std::optional<int> timeoutMs, std::optional<std::string> transport,
             std::optional<std::string> socketIfname, std::optional<bool> profileLinks,
             std::optional<bool> blocking) {
            Config config(timeoutMs, std::move(transport), std::move(socketIfname), profileLinks,
                          blocking);
            return initReleased(
                [&](spcclComm_t* out) { return spcclCommInitFromEnv(out, config.get()); });
          },
          py::arg("timeout_ms"), py::arg("transport"), py::arg("socket_ifname"),
          py::arg("profile_links"), py::arg("blocking"))
      .def("split",
           [](const CommHandle& self, int color, int key) -> std::unique_ptr<CommHandle> {
             spcclComm_t parent = self.get();
             spcclComm_t child = nullptr;
             spcclResult_t result;
             {
               py::gil_scoped_release released;
               result = spcclCommSplit(parent, color, key, &child, nullptr);
             }
             raiseUnlessStarted(result, parent);
             if (child == nullptr) return nullptr;
             return std::make_unique<CommHandle>(child);
           })
      .def("revoke",
           [](const CommHandle& self) {
             runReleased(self, [](spcclComm_t c) { return spcclCommRevoke(c); });
           })
      .def("agree",
           [](const CommHandle& self, int flag) {
             std::vector<int> failed;
             runReleased(self, [&](spcclComm_t c) {
               spcclResult_t result = spcclCommAgree(c, &flag);
               if (result != spcclSuccess) return result;
               int count = 0;
               result = spcclCommGetFailedRanks(c, nullptr, 0, &count);
               if (result != spcclSuccess) return result;
               failed.resize(count);
               return spcclCommGetFailedRanks(c, failed.data(), count, &count);
             });
             return py::make_tuple(flag, failed);
           })
      .def("shrink",
           [](const CommHandle& self, const std::vector<int>& exclude,
              std::optional<int> timeoutMs) -> std::unique_ptr<CommHandle> {
             spcclComm_t parent = self.get();
             spcclComm_t child = nullptr;
             Config config(timeoutMs, std::nullopt, std::nullopt, std::nullopt);
             spcclResult_t result;
             {
               py::gil_scoped_release released;
               result = spcclCommShrink(parent, exclude.data(), static_cast<int>(exclude.size()),
                                        timeoutMs ? config.get() : nullptr, &child);
             }
             raiseUnlessStarted(result, parent);
             return std::make_unique<CommHandle>(child);
           })
      .def("rank",
           [](const CommHandle& self) {
             int rank = 0;
             raiseOnError(spcclCommUserRank(self.get(), &rank), self.get());
             return rank;
           })
      .def("size",
           [](const CommHandle& self) {
             int size = 0;
             raiseOnError(spcclCommCount(self.get(), &size), self.get());
             return size;
           })
      .def("counters",
           [](const CommHandle& self) {
             spcclCounters_t counters{};
             runReleased(self, [&](spcclComm_t c) { return spcclCommGetCounters(c, &counters); });
             return countersDict(counters);
           })
      .def("async_error",
           [](const CommHandle& self) -> py::object {
             spcclComm_t comm = self.get();
             spcclResult_t state = spcclSuccess;
             raiseOnError(spcclCommGetAsyncError(comm, &state), comm);
             if (state == spcclSuccess) return py::none();
             return errorObject(state, state == spcclInProgress ? "" : spcclGetLastError(comm));
           })
      .def("finalize",
           [](const CommHandle& self) {
             spcclComm_t comm = self.get();
             spcclResult_t result;
             {
               py::gil_scoped_release released;  // a blocking one waits for the queued work
               result = spcclCommFinalize(comm);
             }
             raiseUnlessStarted(result, comm);
           })
      .def("close", &CommHandle::close)
      .def("abort", &CommHandle::abort)
      .def_property_readonly("closed", &CommHandle::closed);
  bindDenseCollectives(comm);
  bindNonBlocking(comm);
  bindSparse(comm);
  bindCompressed(comm);
  bindTokenTopk(comm);
  bindMigrate(comm);
  bindBalancePlan(comm);
}

}  // namespace spccl_python
