// One compressed all-reduce call after the API layer validated it: agree
// on the configuration (configuration_agreement.h), run the chosen schedule
// (two_shot.cc or ring_requantize.cc) on the engine, record the traffic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::compress {

// Where recvbuff is memory the CPU cannot reach (a device tensor,
// core/device_compressed_call.h): what writes the output from codes that
// the two-shot schedule holds in host memory, in place of its decodes on
// the CPU. Bit for bit the CPU's decode.
class OutputDecoder {
 public:
  virtual ~OutputDecoder() = default;
  // Queues: recvbuff's elements [begin, begin + length) = the decoding of
  // codes (an encoding of exactly those elements: kernels.h
  // quantizedBytes), which stays unchanged until finish returns.
  virtual spcclResult_t decode(size_t begin, size_t length, const unsigned char* codes) = 0;
  // Returns once every queued decode has written the output.
  virtual spcclResult_t finish() = 0;
};

// Where sendbuff is memory the CPU cannot reach: what encodes the peers'
// chunks where the input lies, and forms, encodes and decodes the owned
// chunk's sum there too, so that only codes cross. Bit for bit the CPU's
// quantize[type] and owned sum (two_shot.cc). With a residual (error
// feedback), the residual lies with the encoder (call.residual is then not
// the CPU's to read) and every encode updates it there (kernels.h
// QuantizeFn). encode only queues: its host memory is filled, and may be
// read or sent, once complete returns, so the schedule sends one chunk
// while the next is encoded.
class InputEncoder {
 public:
  virtual ~InputEncoder() = default;
  // Queues: out (host memory) = the standalone encoding of sendbuff's
  // elements [begin, begin + length) (kernels.h quantizedBytes).
  virtual spcclResult_t encode(size_t begin, size_t length, unsigned char* out) = 0;
  // Returns once every queued encode has filled its host memory.
  virtual spcclResult_t complete() = 0;
  // The owned sum of elements [begin, begin + length), formed where the
  // input lies in f32 as the CPU forms it: (((0 + sendbuff's elements
  // widened) + decoding of decodings[0]) + decoding of decodings[1]) + ...
  // (the peers' encodings of those elements in rank order, host memory,
  // unchanged until finish returns), divided by divisor where not 0 (avg);
  // encoded once, with the residual, into out (host memory, filled on
  // return: the schedule sends it); and recvbuff's elements written with
  // that encoding's decoding (once the call's decoder, the same object,
  // finishes).
  virtual spcclResult_t sumOwned(size_t begin, size_t length,
                                 const std::vector<const unsigned char*>& decodings, int divisor,
                                 unsigned char* out) = 0;
  // Where the owned sum is cheaper on the host (owned_sum_placement.h):
  // *host = sendbuff's elements [begin, begin + length) in host memory,
  // filled on return and kept until the next call of this.
  virtual spcclResult_t copyOwned(size_t begin, size_t length, const unsigned char** host) = 0;
  // The owned sum of those elements formed on the host (acc: length f32,
  // divided for avg, host memory), where the residual lies with the
  // encoder: encoded once, with the residual, into out (host memory,
  // filled on return: the schedule sends it), and recvbuff's elements
  // written with that encoding's decoding (once the decoder finishes).
  virtual spcclResult_t encodeOwnedSum(size_t begin, size_t length, const float* acc,
                                       unsigned char* out) = 0;
};

// The ring schedule's codec steps (ring_requantize.cc), one interface for
// where they run: on the CPU for memory it reaches (the schedule's own),
// or where sendbuff, recvbuff (and the residual) are device memory, on
// the device (compress/device_codecs.h), so that only codes cross. The
// running sum is the schedule's one chunk of f32 partial sum, which lies
// with the implementation. Every step queues: the host memory it fills
// (out) is filled, and the codes it reads may change, once complete
// returns; the output is written once finish returns. Bit for bit the
// CPU's steps (schedule_parts.h), residual included.
class RingSteps {
 public:
  virtual ~RingSteps() = default;
  // out = the encoding of sendbuff's elements [begin, begin + length)
  // (encodeInput).
  virtual spcclResult_t encode(size_t begin, size_t length, unsigned char* out) = 0;
  // The running sum = sendbuff's elements [begin, begin + length) widened
  // to f32, plus the decoding of codes where not nullptr
  // (sumInputAndDecoding, loadInputChunk).
  virtual spcclResult_t accumulate(size_t begin, size_t length, const unsigned char* codes) = 0;
  // out = the running sum's encoding (encodePartialSum).
  virtual spcclResult_t encodeAccumulated(size_t begin, size_t length, unsigned char* out) = 0;
  // The running sum divided by divisor where not 0 (avg), encoded into
  // out and decoded into recvbuff's elements [begin, begin + length)
  // (finishOwnedSum).
  virtual spcclResult_t finishAccumulated(size_t begin, size_t length, int divisor,
                                          unsigned char* out) = 0;
  // recvbuff's elements [begin, begin + length) = the decoding of codes
  // (decodeIntoOutput), which stay unchanged until finish returns.
  virtual spcclResult_t decode(size_t begin, size_t length, const unsigned char* codes) = 0;
  // Returns once every queued step has filled its host memory.
  virtual spcclResult_t complete() = 0;
  // Returns once every queued decode has written the output.
  virtual spcclResult_t finish() = 0;
};

struct CompressedCall {
  const char* name = "spcclCompressedAllReduce";
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;  // may equal sendbuff
  size_t count = 0;
  spcclDataType_t type = spcclFloat32;  // f32, f16 or bf16
  spcclRedOp_t op = spcclSum;           // sum or avg
  kernels::QuantizerSpec spec;
  spcclCompressSchedule_t schedule = spcclCompressTwoShot;
  float* residual = nullptr;  // error feedback, count floats, or nullptr
  // Token top-k's kept rows where they lie (f32, no residual): the call's
  // element j*hidden + k is element rows[j]*hidden + k of sendbuff and
  // recvbuff ([tokens x hidden] tensors). nullptr: the buffers hold the
  // count elements themselves.
  const size_t* rows = nullptr;
  size_t hidden = 0;
  // With rows: nonzero, recvbuff has this many rows and the schedule zeroes
  // the ones not in rows as it writes the kept ones (spcclPruneZero in the
  // same pass over the output; kernels.h F32Run::tokens).
  size_t zeroPrunedOf = 0;
  // Not nullptr: recvbuff is not reached by the CPU, the decoder writes it
  // (the two-shot schedule, no rows).
  OutputDecoder* decoder = nullptr;
  // Not nullptr (with decoder): sendbuff is not the CPU's to reach; the
  // encoder encodes the peers' chunks and forms the owned sum, and holds
  // the residual.
  InputEncoder* encoder = nullptr;
  // Not nullptr: the ring schedule's steps run there (device buffers, no
  // rows); neither sendbuff nor recvbuff is the CPU's to reach.
  RingSteps* ring = nullptr;
};

// The frames' signature of the call (count, datatype, op).
CollSignature signatureOf(const CompressedCall& call);

// Runs on a context begun with signatureOf(call) (the caller holds the
// engine: core/comm.h, runCollectiveBlocking or runCollectiveAsync).
spcclResult_t runCompressedAllReduce(CollContext& ctx, const CompressedCall& call);

}  // namespace spccl::compress
