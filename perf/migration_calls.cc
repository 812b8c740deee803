#include "migration_calls.h"

namespace spccl::perf {

MigrationCalls::MigrationCalls(spcclComm_t comm, int rank, DeviceMemory* device)
    : comm_(comm), rank_(rank), device_(device) {}

MigrationCalls::~MigrationCalls() {
  if (device_)
    for (float* pointer : slots_) device_->release(pointer);
}

float* MigrationCalls::slot(Slot slot, size_t elements, const std::vector<float>* from) {
  if (elements > capacity_[slot]) {
    device_->release(slots_[slot]);
    slots_[slot] = static_cast<float*>(device_->allocate(elements * sizeof(float)));
    capacity_[slot] = elements;
  }
  if (from != nullptr) device_->upload(slots_[slot], from->data(), from->size() * sizeof(float));
  return slots_[slot];
}

spcclResult_t MigrationCalls::finish(spcclResult_t result, Slot slot, std::vector<float>& to,
                                     size_t elements, bool into) {
  device_->synchronize();
  if (result == spcclSuccess && into)
    device_->download(to.data(), slots_[slot], elements * sizeof(float));
  return result;
}

spcclResult_t MigrationCalls::broadcast(std::vector<float>& buff, int straggler) {
  if (!device_)
    return spcclMigrateBroadcast(buff.data(), buff.size(), spcclFloat32, straggler, comm_, nullptr);
  float* on = slot(kFirst, buff.size(), rank_ == straggler ? &buff : nullptr);
  return finish(
      spcclMigrateBroadcast(on, buff.size(), spcclFloat32, straggler, comm_, device_->stream()),
      kFirst, buff, buff.size(), rank_ != straggler);
}

spcclResult_t MigrationCalls::startBroadcast(std::vector<float>& buff, int straggler,
                                             spcclRequest_t* request) {
  void* on = device_ ? slot(kFirst, buff.size(), rank_ == straggler ? &buff : nullptr)
                     : static_cast<void*>(buff.data());
  return spcclImigrateBroadcast(on, buff.size(), spcclFloat32, straggler, comm_, request);
}

spcclResult_t MigrationCalls::finishBroadcast(std::vector<float>& buff, int straggler,
                                              spcclRequest_t request) {
  const spcclResult_t result = spcclWait(request);
  if (!device_) return result;
  return finish(result, kFirst, buff, buff.size(), rank_ != straggler);
}

spcclResult_t MigrationCalls::reduce(std::vector<float>& buff, int dest) {
  if (!device_)
    return spcclMigrateReduce(buff.data(), buff.data(), buff.size(), spcclFloat32, spcclSum, dest,
                              comm_, nullptr);
  float* on = slot(kFirst, buff.size(), &buff);
  return finish(spcclMigrateReduce(on, on, buff.size(), spcclFloat32, spcclSum, dest, comm_,
                                   device_->stream()),
                kFirst, buff, buff.size(), rank_ == dest);
}

spcclResult_t MigrationCalls::allReduce(const std::vector<float>& send, std::vector<float>& recv) {
  if (!device_)
    return spcclAllReduce(send.data(), recv.data(), send.size(), spcclFloat32, spcclSum, comm_,
                          nullptr);
  return finish(spcclAllReduce(slot(kFirst, send.size(), &send), slot(kSecond, recv.size()),
                               send.size(), spcclFloat32, spcclSum, comm_, device_->stream()),
                kSecond, recv, recv.size(), true);
}

spcclResult_t MigrationCalls::mergedAllReduce(const std::vector<float>& send,
                                              std::vector<float>& recv,
                                              const std::vector<float>& migrated,
                                              size_t migratedCount) {
  if (!device_)
    return spcclMigrateAllReduce(send.data(), recv.data(), send.size(), migrated.data(),
                                 migratedCount, 0, spcclFloat32, spcclSum, comm_, nullptr);
  // A device `migrated` on every rank, the straggler's (count 0) too: a
  // host one would make every rank fall back (docs/gpu.md).
  float* folded = slot(kMigrated, migrated.size(), migratedCount > 0 ? &migrated : nullptr);
  return finish(spcclMigrateAllReduce(slot(kFirst, send.size(), &send), slot(kSecond, recv.size()),
                                      send.size(), folded, migratedCount, 0, spcclFloat32, spcclSum,
                                      comm_, device_->stream()),
                kSecond, recv, recv.size(), true);
}

spcclResult_t MigrationCalls::scatter(const std::vector<float>& send, std::vector<float>& recv,
                                      size_t count, int root) {
  if (!device_)
    return spcclScatter(send.data(), recv.data(), count, spcclFloat32, root, comm_, nullptr);
  return finish(
      spcclScatter(slot(kFirst, send.size(), rank_ == root ? &send : nullptr), slot(kSecond, count),
                   count, spcclFloat32, root, comm_, device_->stream()),
      kSecond, recv, count, true);
}

spcclResult_t MigrationCalls::gather(const std::vector<float>& send, std::vector<float>& recv,
                                     size_t count, int root) {
  if (!device_)
    return spcclGather(send.data(), recv.data(), count, spcclFloat32, root, comm_, nullptr);
  return finish(spcclGather(slot(kFirst, count, &send), slot(kSecond, recv.size()), count,
                            spcclFloat32, root, comm_, device_->stream()),
                kSecond, recv, recv.size(), rank_ == root);
}

}  // namespace spccl::perf
