#include "sparse/hc_piece.h"

#include <utility>

#include "base/check.h"
#include "kernels/sparse_kernels.h"
#include "sparse/received_merge.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {

HcPiece::HcPiece(CollContext& ctx, const SparseInput& in, const SparseRunOptions& options,
                 SparseRunReport* report, MergePieceBuffers* buffers)
    : ctx_(&ctx),
      in_(in),
      options_(&options),
      report_(report),
      valueBytes_(spcclTypeSize(in.type)),
      b_(buffers),
      current_(&buffers->current),
      next_(&buffers->merged) {}

kernels::SortedPairs HcPiece::mine() const {
  return ownInput_ ? kernels::SortedPairs{in_.indices, in_.values, in_.nnz} : pairsOf(*current_);
}

spcclResult_t HcPiece::post(const HcStep& step) {
  SPCCL_CHECK(drain());  // the encoding below reuses the last message's buffer
  if (step.sendPeer >= 0) {
    const unsigned char* data = nullptr;
    size_t bytes = 0;
    Encoding e;
    if (dense_) {
      e = encodeDenseTensor(in_.type, tensor_, in_.universe, options_->allowedEncodings,
                            &b_->denseMessage, &bytes, &denseNnz_, &b_->received);
      data = b_->denseMessage.data();
      sentPairs_ = denseNnz_;
    } else {
      const kernels::SortedPairs set = mine();
      sentPairs_ = set.count;
      // (encoded only grows: no zero-fill per stage)
      e = encodeSetInto(set.positions, set.values, set.count, in_.universe, valueBytes_,
                        options_->allowedEncodings, &b_->encoded, &bytes);
      data = b_->encoded.data();
    }
    SPCCL_CHECK(ctx_->isend(step.sendPeer, data, bytes, &sendRequest_, static_cast<uint8_t>(e)));
    if (report_) report_->bytesSent += bytes;
  }
  if (step.recvPeer >= 0) {
    const size_t capacity =
        messageCapacity(step.maxNnz, in_.universe, valueBytes_, options_->allowedEncodings);
    b_->receive.allocate(capacity);
    SPCCL_CHECK(ctx_->irecv(step.recvPeer, b_->receive.data(), capacity, &recvRequest_));
  }
  return spcclSuccess;
}

spcclResult_t HcPiece::drain() {
  if (!sendRequest_.valid()) return spcclSuccess;
  const spcclResult_t waited = ctx_->wait(&sendRequest_);
  sendRequest_ = {};
  return waited;
}

spcclResult_t HcPiece::complete(const HcStep& step) {
  if (step.recvPeer < 0) return spcclSuccess;
  size_t received = 0;
  uint8_t flags = 0;
  const spcclResult_t waited = ctx_->wait(&recvRequest_, &received, &flags);
  recvRequest_ = {};
  SPCCL_CHECK(waited);
  b_->receive.setSize(received);
  if (report_) report_->bytesReceived += received;
  const MessageBuffer& data = b_->receive;
  const uint64_t theirPairs = messagePairs(data.data(), data.size());
  const uint64_t myPairs = step.how == DenseMerge::Place ? 0 : dense_ ? denseNnz_ : mine().count;
  if (!dense_ && mergeDensely(myPairs + theirPairs, in_.universe)) becomeDense(step.how);
  if (dense_)
    return mergeMessageIntoDense(ctx_->kernels(), in_.type, data.data(), data.size(), flags,
                                 in_.universe, options_->allowedEncodings, step.recvPeer, step.how,
                                 tensor_, &b_->received);
  if (step.how == DenseMerge::Place) {
    SPCCL_CHECK(decodeSet(data.data(), data.size(), flags, in_.universe, valueBytes_,
                          options_->allowedEncodings, step.recvPeer, &b_->received));
    std::swap(*current_, b_->received);
    ownInput_ = false;
    return spcclSuccess;
  }
  // Merged straight from the message's bytes (received_merge.h).
  const ReceivedMessage message{
      data.data(), data.size(), flags, in_.universe, options_->allowedEncodings, step.recvPeer};
  const bool theirsLower = step.how == DenseMerge::AddLower;
  if (step.last && in_.denseOutput != nullptr) {
    SPCCL_CHECK(mergeReceivedSetIntoDense(in_.type, mine(), message, theirsLower, &b_->received,
                                          in_.denseOutput, &outputNnz_));
    inOutput_ = true;
    return spcclSuccess;
  }
  SPCCL_CHECK(mergeReceivedSet(in_.type, mine(), message, theirsLower, &b_->received, next_));
  std::swap(current_, next_);
  ownInput_ = false;
  return spcclSuccess;
}

void HcPiece::becomeDense(DenseMerge how) {
  const size_t bytes = static_cast<size_t>(in_.universe) * valueBytes_;
  if (in_.denseOutput != nullptr) {
    tensor_ = in_.denseOutput;
  } else {
    if (b_->denseTensor.size() < bytes) b_->denseTensor.resize(bytes);
    tensor_ = b_->denseTensor.data();
  }
  const kernels::SortedPairs set = mine();
  if (how != DenseMerge::Place)
    kernels::densify(valueBytes_, set.positions, set.values, set.count, tensor_,
                     static_cast<size_t>(in_.universe));
  denseNnz_ = set.count;
  dense_ = true;
}

void HcPiece::finish(SparseSet* result) {
  result->inDenseOutput = false;
  result->denseOutputNnz = SIZE_MAX;
  if (inOutput_) {
    result->inDenseOutput = true;
    result->denseOutputNnz = outputNnz_;
    return;
  }
  if (!dense_ && ownInput_) {  // no merge (one rank): the input is the result
    const auto* values = static_cast<const unsigned char*>(in_.values);
    result->positions.assign(in_.indices, in_.indices + in_.nnz);
    result->values.assign(values, values + in_.nnz * valueBytes_);
    return;
  }
  if (!dense_) {
    std::swap(*result, *current_);
    return;
  }
  if (tensor_ == in_.denseOutput) {
    result->inDenseOutput = true;
    return;
  }
  denseToPairs(in_.type, tensor_, static_cast<size_t>(in_.universe), result);
}

}  // namespace spccl::sparse
