#include "collective_checks.h"

#include <algorithm>
#include <utility>

#include "../common/coll_reference.h"

namespace spccl::gpu_coll_test {

using namespace spccl::coll_reference;
using gpu_test::KindBuffer;

CheckedCall::CheckedCall(cudaStream_t s, spcclDataType_t type, bool inPlace, std::string what,
                         size_t sendElements, size_t recvElements, size_t checkedElements,
                         MemoryKind kind)
    : stream_(s),
      type_(type),
      inPlace_(inPlace),
      what_(std::move(what)),
      checked_(checkedElements),
      expected_(hostBuffer(type, checkedElements)),
      send_(kind, sendElements * spcclTypeSize(type)),
      recv_(kind, inPlace ? 1 : recvElements * spcclTypeSize(type)) {}

void CheckedCall::verify() const {
  expectElements(expected_, (inPlace_ ? send_ : recv_).download(stream_), type_, checked_, what_);
}

void check(CheckedCall& call) {
  expectSuccess(call.issue(), call.what());
  call.verify();
}

AllReduceCheck::AllReduceCheck(cudaStream_t s, spcclDataType_t type, spcclRedOp_t op, size_t count,
                               bool inPlace, MemoryKind kind)
    : CheckedCall(s, type, inPlace, describe("AllReduce", type, op, count, inPlace, s, kind), count,
                  count, count, kind),
      op_(op),
      count_(count) {
  const World& w = world();
  std::vector<char> send = hostBuffer(type, count);
  for (size_t i = 0; i < count; ++i) {
    store(type, send.data(), i, reductionInput(op, w.rank, i, w.nranks));
    store(type, expected_.data(), i, reductionReference(type, op, i, w.nranks));
  }
  send_.upload(send.data(), count * spcclTypeSize(type), s);
}

spcclResult_t AllReduceCheck::issue() {
  return spcclAllReduce(send_.get(), out(), count_, type_, op_, world().comm, stream_);
}

AllToAllCheck::AllToAllCheck(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace)
    : CheckedCall(s, type, inPlace, describe("AllToAll", type, spcclSum, count, inPlace, s),
                  count * world().nranks, count * world().nranks, count * world().nranks),
      count_(count) {
  const World& w = world();
  std::vector<char> send = hostBuffer(type, count * w.nranks);
  for (int peer = 0; peer < w.nranks; ++peer)
    for (size_t i = 0; i < count; ++i) {
      store(type, send.data(), peer * count + i, tagValue(w.rank, peer, i));
      store(type, expected_.data(), peer * count + i, tagValue(peer, w.rank, i));
    }
  send_.upload(send.data(), count * w.nranks * spcclTypeSize(type), s);
}

spcclResult_t AllToAllCheck::issue() {
  return spcclAllToAll(send_.get(), out(), count_, type_, world().comm, stream_);
}

struct AllToAllvLayout {
  std::vector<size_t> sendcounts, sdispls, recvcounts, rdispls;
  size_t sendTotal = 0, recvTotal = 0;
};

namespace {

AllToAllvLayout layoutOf(size_t count) {
  const World& w = world();
  AllToAllvLayout l;
  for (int peer = 0; peer < w.nranks; ++peer) {  // one element of gap before each block
    l.sendcounts.push_back(variableCount(count, w.rank, peer));
    l.sdispls.push_back(l.sendTotal + 1);
    l.sendTotal += l.sendcounts.back() + 1;
    l.recvcounts.push_back(variableCount(count, peer, w.rank));
    l.rdispls.push_back(l.recvTotal + 1);
    l.recvTotal += l.recvcounts.back() + 1;
  }
  return l;
}

}  // namespace

AllToAllvCheck::AllToAllvCheck(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace)
    : AllToAllvCheck(s, type, count, inPlace, layoutOf(count)) {}

// In place the one buffer spans both extents and is checked whole.
AllToAllvCheck::AllToAllvCheck(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace,
                               const AllToAllvLayout& l)
    : CheckedCall(s, type, inPlace, describe("AllToAllv", type, spcclSum, count, inPlace, s),
                  inPlace ? std::max(l.sendTotal, l.recvTotal) : l.sendTotal, l.recvTotal,
                  inPlace ? std::max(l.sendTotal, l.recvTotal) : l.recvTotal),
      sendcounts_(l.sendcounts),
      sdispls_(l.sdispls),
      recvcounts_(l.recvcounts),
      rdispls_(l.rdispls) {
  const World& w = world();
  std::vector<char> send = hostBuffer(type, send_.bytes() / spcclTypeSize(type));
  for (int peer = 0; peer < w.nranks; ++peer)
    for (size_t i = 0; i < sendcounts_[peer]; ++i)
      store(type, send.data(), sdispls_[peer] + i, tagValue(w.rank, peer, i));
  if (inPlace) expected_ = send;  // what no received block covers keeps the input
  for (int peer = 0; peer < w.nranks; ++peer)
    for (size_t i = 0; i < recvcounts_[peer]; ++i)
      store(type, expected_.data(), rdispls_[peer] + i, tagValue(peer, w.rank, i));
  send_.upload(send.data(), send_.bytes(), s);
}

spcclResult_t AllToAllvCheck::issue() {
  return spcclAllToAllv(send_.get(), sendcounts_.data(), sdispls_.data(), out(), recvcounts_.data(),
                        rdispls_.data(), type_, world().comm, stream_);
}

void checkScatter(cudaStream_t s, spcclDataType_t type, size_t count, int root) {
  const World& w = world();
  const size_t es = spcclTypeSize(type), total = count * w.nranks;
  const std::string what =
      describe("Scatter", type, spcclSum, count, false, s) + " root " + std::to_string(root);
  std::vector<char> send = hostBuffer(type, total), expected = hostBuffer(type, count);
  for (int r = 0; r < w.nranks; ++r)
    for (size_t i = 0; i < count; ++i)
      store(type, send.data(), r * count + i, tagValue(root, r, i));
  for (size_t i = 0; i < count; ++i) store(type, expected.data(), i, tagValue(root, w.rank, i));
  KindBuffer dsend(deviceKind(), total * es), drecv(deviceKind(), count * es);
  if (w.rank == root) dsend.upload(send.data(), total * es, s);
  expectSuccess(spcclScatter(dsend.get(), drecv.get(), count, type, root, w.comm, s), what);
  expectElements(expected, drecv.download(s), type, count, what);
}

void checkGather(cudaStream_t s, spcclDataType_t type, size_t count, int root) {
  const World& w = world();
  const size_t es = spcclTypeSize(type), total = count * w.nranks;
  const std::string what =
      describe("Gather", type, spcclSum, count, false, s) + " root " + std::to_string(root);
  std::vector<char> send = hostBuffer(type, count), expected = hostBuffer(type, total);
  for (size_t i = 0; i < count; ++i) store(type, send.data(), i, tagValue(w.rank, root, i));
  for (int r = 0; r < w.nranks; ++r)
    for (size_t i = 0; i < count; ++i)
      store(type, expected.data(), r * count + i, tagValue(r, root, i));
  KindBuffer dsend(deviceKind(), count * es), drecv(deviceKind(), total * es);
  dsend.upload(send.data(), count * es, s);
  expectSuccess(spcclGather(dsend.get(), drecv.get(), count, type, root, w.comm, s), what);
  std::vector<unsigned char> got = drecv.download(s);
  if (w.rank == root) expectElements(expected, got, type, total, what);
}

void checkAllReduce(cudaStream_t s, spcclDataType_t type, spcclRedOp_t op, size_t count,
                    bool inPlace, MemoryKind kind) {
  AllReduceCheck call(s, type, op, count, inPlace, kind);
  check(call);
}

void checkAllToAll(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace) {
  AllToAllCheck call(s, type, count, inPlace);
  check(call);
}

void checkAllToAllv(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace) {
  AllToAllvCheck call(s, type, count, inPlace);
  check(call);
}

}  // namespace spccl::gpu_coll_test
