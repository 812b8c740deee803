/*
 * spccl — sparse- and compression-aware collective communication.
 *
 * The public C API. NCCL-shaped: an NCCL user should recognise every call.
 * Only C here (no C++ in this header); every function returns spcclResult_t
 * and never throws. Data type and reduction op values equal NCCL's so the
 * interposers can pass them through unchanged.
 */
#ifndef SPCCL_H_
#define SPCCL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPCCL_MAJOR 0
#define SPCCL_MINOR 1
#define SPCCL_PATCH 0
#define SPCCL_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#define SPCCL_VERSION_CODE SPCCL_VERSION(SPCCL_MAJOR, SPCCL_MINOR, SPCCL_PATCH)

typedef enum {
  spcclSuccess = 0,
  spcclSystemError = 1,     /* a system call failed (socket, mmap, ...) */
  spcclInternalError = 2,   /* a bug in spccl */
  spcclInvalidArgument = 3, /* a bad argument; the message names it. A collective
                             * rejected on one rank fails on its peers at once
                             * (spcclInvalidUsage naming that rank) */
  spcclInvalidUsage = 4,    /* e.g. ranks called different collectives */
  spcclRemoteError = 5,     /* a peer failed or went away */
  spcclInProgress = 6,      /* non-blocking operation not finished yet */
  spcclTimeout = 7,         /* a wait passed its deadline (SPCCL_TIMEOUT_MS) */
  spcclRevoked = 8,         /* the communicator was revoked (spcclCommRevoke, on any rank) */
  spcclNumResults = 9,
  spcclResult_MaxEnum = 0x7fffffff /* keeps the type int-wide; not a result */
} spcclResult_t;

typedef enum {
  spcclInt8 = 0,
  spcclChar = 0,
  spcclUint8 = 1,
  spcclInt32 = 2,
  spcclInt = 2,
  spcclUint32 = 3,
  spcclInt64 = 4,
  spcclUint64 = 5,
  spcclFloat16 = 6,
  spcclHalf = 6,
  spcclFloat32 = 7,
  spcclFloat = 7,
  spcclFloat64 = 8,
  spcclDouble = 8,
  spcclBfloat16 = 9,
  spcclNumTypes = 10,
  /* Keeps the type int-wide, so that checking a caller's out-of-range
   * value is defined behaviour; not a type. */
  spcclDataType_MaxEnum = 0x7fffffff
} spcclDataType_t;

typedef enum {
  spcclSum = 0,
  spcclProd = 1,
  spcclMax = 2,
  spcclMin = 3,
  spcclAvg = 4, /* sum, then divided by the number of ranks */
  spcclNumOps = 5,
  spcclRedOp_MaxEnum = 0x7fffffff /* keeps the type int-wide; not an op */
} spcclRedOp_t;

typedef struct spcclComm* spcclComm_t;
typedef struct spcclRequest* spcclRequest_t;

#define SPCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[SPCCL_UNIQUE_ID_BYTES];
} spcclUniqueId;

/* Communicator configuration. Begins with size/magic/version so that a
 * binary built against an older, smaller struct keeps working: fields the
 * caller's struct does not reach take their defaults. Initialise with
 * SPCCL_CONFIG_INITIALIZER and set only what you need. */
#define SPCCL_CONFIG_MAGIC 0x5350434cu /* "SPCL" */
#define SPCCL_CONFIG_UNDEF_INT (-2147483647 - 1)
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int timeoutMs;            /* every wait's deadline; UNDEF: SPCCL_TIMEOUT_MS */
  const char* transport;    /* "tcp", "shm", "auto" or a plugin name; NULL: SPCCL_TRANSPORT */
  const char* socketIfname; /* NCCL syntax; NULL: SPCCL_SOCKET_IFNAME */
  int profileLinks; /* measure alpha/beta at init (1) or not (0); UNDEF: SPCCL_PROFILE_LINKS */
  /* 1: creation completes before the call returns. 0 (NCCL's non-blocking
   * communicator): spcclCommInitRank, spcclCommInitRankConfig,
   * spcclCommInitFromEnv, spcclCommSplit and spcclCommShrink return
   * spcclInProgress at once with a valid handle; the rendezvous and the
   * connections run on a background thread; poll spcclCommGetAsyncError
   * until it is no longer spcclInProgress. Other calls on the communicator
   * meanwhile wait for the creation (within 3 x timeoutMs + 1 s) and fail
   * with its error if it failed; spcclCommAbort and spcclCommDestroy stop
   * it within tens of ms. Split and Shrink still agree on the new
   * communicator with the parent's ranks inside the call. Arguments are
   * checked before the call returns. Appended last: older binaries' smaller
   * structs read as UNDEF. UNDEF: SPCCL_COMM_BLOCKING (default 1); with a
   * NULL config, Split and Shrink take the parent's setting. */
  int blocking;
} spcclConfig_t;

#define SPCCL_CONFIG_INITIALIZER                                                                 \
  {                                                                                              \
    sizeof(spcclConfig_t), SPCCL_CONFIG_MAGIC, SPCCL_VERSION_CODE, SPCCL_CONFIG_UNDEF_INT, NULL, \
        NULL, SPCCL_CONFIG_UNDEF_INT, SPCCL_CONFIG_UNDEF_INT                                     \
  }

#define SPCCL_SPLIT_NOCOLOR (-1)

/* Traffic counters of a communicator since its creation. */
typedef struct {
  uint64_t bytesSent;     /* payload bytes this rank handed to transports */
  uint64_t bytesReceived; /* payload bytes this rank received */
  uint64_t messagesSent;
  uint64_t messagesReceived;
} spcclCounters_t;

/* ---- version, ids, communicators ---- */
spcclResult_t spcclGetVersion(int* version);
/* Creates a new id and starts the rendezvous service for it in this process
 * (a background thread that serves one rendezvous and then exits). */
spcclResult_t spcclGetUniqueId(spcclUniqueId* uniqueId);
spcclResult_t spcclCommInitRank(spcclComm_t* comm, int nranks, spcclUniqueId commId, int rank);
spcclResult_t spcclCommInitRankConfig(spcclComm_t* comm, int nranks, spcclUniqueId commId, int rank,
                                      const spcclConfig_t* config);
/* Rank, size and rendezvous from the launcher's environment: spcclrun
 * (SPCCL_RANK, SPCCL_NRANKS, SPCCL_COMM_ID, SPCCL_JOB_SECRET), Open MPI,
 * PMI, Slurm, torchrun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
 * config may be NULL. */
spcclResult_t spcclCommInitFromEnv(spcclComm_t* comm, const spcclConfig_t* config);
/* Collective over comm: ranks with the same color form a new communicator,
 * ordered by (key, old rank). color SPCCL_SPLIT_NOCOLOR: *newcomm = NULL. */
spcclResult_t spcclCommSplit(spcclComm_t comm, int color, int key, spcclComm_t* newcomm,
                             const spcclConfig_t* config);
/* Frees comm. After spcclCommFinalize it frees without communicating; on a
 * communicator whose non-blocking creation still runs, it stops the
 * creation first (as spcclCommAbort does). */
spcclResult_t spcclCommDestroy(spcclComm_t comm);
/* NCCL's ncclCommFinalize: completes every operation issued on comm
 * (non-blocking requests, calls enqueued on streams, in issue order) and
 * leaves it ready for spcclCommDestroy; later calls on comm fail with
 * spcclInvalidUsage (Test/Wait on earlier requests still work). A blocking
 * communicator returns when the work is done, with the first failure of a
 * stream-enqueued call if any. A non-blocking one (spcclConfig_t.blocking
 * = 0) returns spcclInProgress at once; spcclCommGetAsyncError reports
 * spcclInProgress until the flush ran, then its result. A second call
 * fails with spcclInvalidUsage. */
spcclResult_t spcclCommFinalize(spcclComm_t comm);
/* Tears the communicator down at once and tells the peers, which fail
 * their pending operations with spcclRemoteError. A non-blocking creation
 * still running is stopped (its waits end within tens of ms) and its
 * thread joined before the call returns. */
spcclResult_t spcclCommAbort(spcclComm_t comm);
spcclResult_t spcclCommCount(const spcclComm_t comm, int* count);
spcclResult_t spcclCommUserRank(const spcclComm_t comm, int* rank);
spcclResult_t spcclCommGetCounters(const spcclComm_t comm, spcclCounters_t* counters);
/* The communicator's state, NCCL's way: spcclInProgress while a
 * non-blocking creation (spcclConfig_t.blocking = 0) or a non-blocking
 * spcclCommFinalize is still under way; the creation's error if it failed;
 * the first failure of a call enqueued on a CUDA stream, found after that
 * call returned; then the finalize flush's error; spcclSuccess if none.
 * Once a stream call failed, every later call on comm fails with it;
 * spcclGetLastError(comm) says why. Never waits. */
spcclResult_t spcclCommGetAsyncError(spcclComm_t comm, spcclResult_t* asyncError);
/* The CUDA device current on the thread that created comm; -1 if none. */
spcclResult_t spcclCommCuDevice(const spcclComm_t comm, int* device);
/* Writes comm's flight recorder (its last SPCCL_FLIGHT_RECORDER calls and
 * its peers' progress) as one line of JSON to path (created or truncated),
 * or, path NULL, appended to SPCCL_DEBUG_FILE or stderr. spcclInvalidUsage
 * when the recorder is off (SPCCL_FLIGHT_RECORDER=0). Safe while another
 * thread is inside a call on comm. `spccl_info --dump` reads it. */
spcclResult_t spcclCommDump(spcclComm_t comm, const char* path);

/* ---- life after a failure (docs/fault-tolerance.md) ---- */
/* Revokes comm on every rank, as ULFM's MPI_Comm_revoke: every pending and
 * later call on comm, on every rank, returns spcclRevoked (pending calls
 * within a few ms on a live network; a rank that only hears of it through
 * the revoke's relays, at its next call). Only spcclCommAgree,
 * spcclCommShrink, spcclCommDestroy and spcclCommAbort remain usable.
 * Returns at once; revoking twice is harmless. */
spcclResult_t spcclCommRevoke(spcclComm_t comm);
/* Fault-tolerant agreement among the ranks of comm that are alive: *flag
 * becomes the bitwise AND of the flags of the ranks that took part, the
 * same on every one of them, and so does the set of failed ranks
 * (spcclCommGetFailedRanks). A rank that is dead, or that does not reach
 * this call within the communicator's timeout, counts as failed. Works on
 * a revoked or broken communicator. Bounds: docs/fault-tolerance.md. */
spcclResult_t spcclCommAgree(spcclComm_t comm, int* flag);
/* The failed ranks the last spcclCommAgree on comm agreed on, in
 * increasing order: at most maxRanks of them in failedRanks (may be NULL
 * when maxRanks is 0), their number in *nFailed. */
spcclResult_t spcclCommGetFailedRanks(spcclComm_t comm, int* failedRanks, int maxRanks,
                                      int* nFailed);
/* Called by every rank of comm not in excludeRanks (and by no other): a new
 * communicator of those ranks, in their old order, ranks renumbered from 0.
 * Needs nothing from the excluded ranks, which may be dead, stopped or
 * alive (the old rank 0 among them). A rank that is itself in excludeRanks
 * gets spcclInvalidArgument. Works on a revoked or broken communicator.
 * config may be NULL (comm's settings). */
spcclResult_t spcclCommShrink(spcclComm_t comm, const int* excludeRanks, int nExclude,
                              const spcclConfig_t* config, spcclComm_t* newcomm);

const char* spcclGetErrorString(spcclResult_t result);
/* The message of the last failed call on comm (per communicator); with
 * comm NULL, of the calling thread's last failed call. Never NULL. */
const char* spcclGetLastError(spcclComm_t comm);

/* ---- collectives ----
 * Buffers: host memory (pageable, pinned or managed) or CUDA device memory,
 * found per buffer; a call's send and receive buffers are of one kind.
 * stream: NULL, and the call completes before it returns (device memory is
 * copied through pinned host memory). Otherwise a cudaStream_t: the call is
 * enqueued in the stream's order and returns at once; its results are
 * visible to later work on that stream; a failure after the return is
 * reported by spcclCommGetAsyncError and by every later call on comm.
 * Rooted calls (Broadcast, Reduce, their non-blocking forms, and Scatter,
 * Gather, MigrateBroadcast, MigrateReduce below) first check that every
 * rank passed the same root; if not, the call fails with spcclInvalidUsage
 * on every rank, naming two ranks and their roots, and the communicator
 * stays usable (SPCCL_CHECK_ROOTS=0 skips the check). */
spcclResult_t spcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                             spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                             void* stream);
spcclResult_t spcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                             spcclDataType_t datatype, int root, spcclComm_t comm, void* stream);
spcclResult_t spcclReduce(const void* sendbuff, void* recvbuff, size_t count,
                          spcclDataType_t datatype, spcclRedOp_t op, int root, spcclComm_t comm,
                          void* stream);
/* recvbuff holds nranks * sendcount elements, rank r's at offset r*sendcount. */
spcclResult_t spcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                             spcclDataType_t datatype, spcclComm_t comm, void* stream);
/* sendbuff holds nranks * recvcount elements. */
spcclResult_t spcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                 spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                                 void* stream);
/* count elements to and from every rank. */
spcclResult_t spcclAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                            spcclDataType_t datatype, spcclComm_t comm, void* stream);
/* Counts and displacements in elements, one per rank. */
spcclResult_t spcclAllToAllv(const void* sendbuff, const size_t sendcounts[],
                             const size_t sdispls[], void* recvbuff, const size_t recvcounts[],
                             const size_t rdispls[], spcclDataType_t datatype, spcclComm_t comm,
                             void* stream);
spcclResult_t spcclBarrier(spcclComm_t comm, void* stream);

/* Point to point. Outside a group each call completes before returning, so
 * a pair that sends to each other must use a group. */
spcclResult_t spcclSend(const void* sendbuff, size_t count, spcclDataType_t datatype, int peer,
                        spcclComm_t comm, void* stream);
spcclResult_t spcclRecv(void* recvbuff, size_t count, spcclDataType_t datatype, int peer,
                        spcclComm_t comm, void* stream);
/* Calls between GroupStart and GroupEnd (per thread, nestable) are deferred
 * and issued together at the outermost GroupEnd: point-to-point operations
 * are all posted before any is waited on. */
spcclResult_t spcclGroupStart(void);
spcclResult_t spcclGroupEnd(void);

/* ---- non-blocking forms ----
 * Each returns at once with a request; operations on one communicator run
 * in the order they were issued. spcclTest sets *done and, when done,
 * returns the operation's result and releases the request; spcclWait
 * blocks until done, returns the result and releases the request. */
spcclResult_t spcclIallReduce(const void* sendbuff, void* recvbuff, size_t count,
                              spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                              spcclRequest_t* request);
spcclResult_t spcclIbroadcast(const void* sendbuff, void* recvbuff, size_t count,
                              spcclDataType_t datatype, int root, spcclComm_t comm,
                              spcclRequest_t* request);
spcclResult_t spcclIreduce(const void* sendbuff, void* recvbuff, size_t count,
                           spcclDataType_t datatype, spcclRedOp_t op, int root, spcclComm_t comm,
                           spcclRequest_t* request);
spcclResult_t spcclIallGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                              spcclDataType_t datatype, spcclComm_t comm, spcclRequest_t* request);
spcclResult_t spcclIreduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                  spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                                  spcclRequest_t* request);
spcclResult_t spcclIallToAll(const void* sendbuff, void* recvbuff, size_t count,
                             spcclDataType_t datatype, spcclComm_t comm, spcclRequest_t* request);
spcclResult_t spcclIbarrier(spcclComm_t comm, spcclRequest_t* request);
spcclResult_t spcclTest(spcclRequest_t request, int* done);
spcclResult_t spcclWait(spcclRequest_t request);

/* ---- sparse all-reduce (Zen; docs/algorithms.md 2) ----
 * Lossless: the result equals the dense AllReduce (exactly for integers, up
 * to reassociation for floats; -0.0 counts as zero) and is bitwise
 * identical on every rank. Ops: spcclSum and spcclAvg. */
typedef enum {
  spcclSparseAuto = 0,                /* the planner picks from profiled density */
  spcclSparseBalancedParallelism = 1, /* Zen BP: push to hash owners, pull aggregates */
  spcclSparseHierarchical = 2,        /* Zen HC: recursive doubling, incremental merge */
  spcclSparseAllGather = 3,           /* AGsparse baseline: all-gather of COO */
  spcclSparseBlock = 4,               /* OmniReduce-style 256-element blocks */
  spcclSparseDense = 5,               /* dense ring all-reduce */
  spcclSparseNumAlgorithms = 6,
  spcclSparseAlgorithm_MaxEnum = 0x7fffffff
} spcclSparseAlgorithm_t;

typedef enum {
  spcclEncodingAuto = 0,   /* per message, the smallest of the others */
  spcclEncodingCoo = 1,    /* index + value pairs */
  spcclEncodingBitmap = 2, /* a bit per index of the partition (Zen's hash bitmap) + values */
  spcclEncodingPacked = 3, /* sorted indices, delta + varint coded, + values */
  spcclEncodingDense = 4,  /* every value of the partition */
  spcclNumEncodings = 5,
  spcclEncoding_MaxEnum = 0x7fffffff
} spcclSparseEncoding_t;

typedef enum {
  spcclPartitionAuto = 0,
  spcclPartitionZenHash = 1, /* h0 ownership, hierarchical hashing (Zen Algorithm 1) */
  spcclPartitionPermutation =
      2,                     /* keyed permutation, contiguous ranges (docs/algorithms.md 2.6 (1)) */
  spcclPartitionTwoPass = 3, /* h0 ownership, exact count / prefix-sum / scatter */
  spcclNumPartitioners = 4,
  spcclPartition_MaxEnum = 0x7fffffff
} spcclSparsePartitioner_t;

typedef enum {
  spcclIndexUint32 = 0,
  spcclIndexUint64 = 1,
  spcclIndex_MaxEnum = 0x7fffffff
} spcclIndexType_t;

#define SPCCL_SPARSE_OPTIONS_MAGIC 0x53505253u /* "SPRS" */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  spcclSparseAlgorithm_t algorithm;
  uint64_t tag; /* keys profiling (e.g. a bucket id); 0: keyed by count */
  spcclSparseEncoding_t encoding;
  spcclSparsePartitioner_t partitioner;
} spcclSparseOptions_t;
#define SPCCL_SPARSE_OPTIONS_INITIALIZER                                                           \
  {                                                                                                \
    sizeof(spcclSparseOptions_t), SPCCL_SPARSE_OPTIONS_MAGIC, SPCCL_VERSION_CODE, spcclSparseAuto, \
        0, spcclEncodingAuto, spcclPartitionAuto                                                   \
  }

/* Dense in, dense out; zeros are skipped. Options: defaults. */
spcclResult_t spcclSparseAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                   spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                                   void* stream);
/* The same with options (NULL: defaults). */
spcclResult_t spcclSparseAllReduceWithOptions(const void* sendbuff, void* recvbuff, size_t count,
                                              spcclDataType_t datatype, spcclRedOp_t op,
                                              const spcclSparseOptions_t* options, spcclComm_t comm,
                                              void* stream);
/* COO in (indices unsorted, duplicates summed, every index < count), dense
 * out (recvbuff holds count elements). */
spcclResult_t spcclSparseAllReduceCoo(const void* indices, spcclIndexType_t indexType,
                                      const void* values, size_t nnz, size_t count,
                                      spcclDataType_t datatype, spcclRedOp_t op, void* recvbuff,
                                      const spcclSparseOptions_t* options, spcclComm_t comm,
                                      void* stream);
/* COO in, COO out (indices ascending): *outNnz gets the result's size; if
 * it exceeds outCapacity nothing is written and the call returns
 * spcclInvalidUsage (on every rank, since the result is the same). */
spcclResult_t spcclSparseAllReduceCooToCoo(const void* indices, spcclIndexType_t indexType,
                                           const void* values, size_t nnz, size_t count,
                                           spcclDataType_t datatype, spcclRedOp_t op,
                                           void* outIndices, void* outValues, size_t outCapacity,
                                           size_t* outNnz, const spcclSparseOptions_t* options,
                                           spcclComm_t comm, void* stream);

/* What the planner saw and did for one tag, on this rank. */
typedef struct {
  size_t size; /* set by the caller: sizeof(spcclSparseStats_t) */
  uint64_t calls;
  spcclSparseAlgorithm_t algorithm;                  /* chosen for the last call */
  char reason[160];                                  /* why, in words */
  double predictedSeconds[spcclSparseNumAlgorithms]; /* cost model per candidate; <0: not a
                                                        candidate */
  double density;                                    /* d: mean local density over ranks */
  double gamma;                                      /* densification after aggregation */
  double pushImbalance; /* Zen Def. 8: max over mean of partition sizes pushed */
  double pullImbalance; /* the same for the aggregates pulled */
  uint64_t bytesSent;   /* last call, this rank */
  uint64_t bytesReceived;
  uint64_t predictedBytesSent; /* the formula for the chosen algorithm, this rank */
  double measuredSeconds;      /* last call, this rank */
} spcclSparseStats_t;
spcclResult_t spcclSparseGetStats(spcclComm_t comm, uint64_t tag, spcclSparseStats_t* stats);

/* ---- compressed all-reduce (AccTFM; docs/algorithms.md 3; docs/compressed.md) ----
 * Lossy and opt-in: floats only (f32, f16, bf16), ops sum and avg. Every
 * rank gets the same bits; the error bound per element is stated in
 * docs/compressed.md. */
typedef enum {
  spcclCodecPiecewise = 0, /* AccTFM Eq. (6)-(12): finer steps near zero */
  spcclCodecLinear = 1,    /* AccTFM Eq. (4)-(5): equal steps */
  spcclNumCodecs = 2,
  spcclCodec_MaxEnum = 0x7fffffff
} spcclCodec_t;

typedef enum {
  /* Direct reduce-scatter of quantized chunks, full-precision sum, the sum
   * quantized once, all-gather of its codes: each input and the output are
   * quantized once. */
  spcclCompressTwoShot = 0,
  /* Ring: the partial sum is re-quantized at every hop (error grows with n). */
  spcclCompressRing = 1,
  spcclNumCompressSchedules = 2,
  spcclCompressSchedule_MaxEnum = 0x7fffffff
} spcclCompressSchedule_t;

#define SPCCL_COMPRESSION_MAGIC 0x434d5052u /* "CMPR" */
#define SPCCL_COMPRESSION_DEFAULT_BLOCK 256
/* Versioned like spcclConfig_t. codec, bits, blockSize and schedule must
 * be the same on every rank (checked; a mismatch fails the call on all). */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  spcclCodec_t codec;
  int bits;         /* total bits per element, sign included: 2..8 */
  size_t blockSize; /* elements per scale; 0: SPCCL_COMPRESSION_DEFAULT_BLOCK */
  spcclCompressSchedule_t schedule;
  /* Error feedback: NULL (off) or count floats (f32 whatever the datatype)
   * that the caller owns, zeroes before the first call and passes to every
   * call on the same tensor. Each call compresses input + residual and
   * leaves in the residual what this rank's quantizations lost. */
  float* residual;
} spcclCompression;
#define SPCCL_COMPRESSION_INITIALIZER                                                              \
  {                                                                                                \
    sizeof(spcclCompression), SPCCL_COMPRESSION_MAGIC, SPCCL_VERSION_CODE, spcclCodecPiecewise, 4, \
        0, spcclCompressTwoShot, NULL                                                              \
  }

spcclResult_t spcclCompressedAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       spcclDataType_t datatype, spcclRedOp_t op,
                                       const spcclCompression* cfg, spcclComm_t comm, void* stream);
/* Non-blocking form (spcclTest/spcclWait). *cfg is copied; the buffers and
 * the residual must stay valid until the request completes. */
spcclResult_t spcclIcompressedAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                        spcclDataType_t datatype, spcclRedOp_t op,
                                        const spcclCompression* cfg, spcclComm_t comm,
                                        spcclRequest_t* request);

/* Token-level top-k (AccTFM section 4.3.1; docs/compressed.md). buff is a
 * [tokens x hidden] row-major partial sum, reduced in place; scores holds
 * this rank's f32 importance of each token. The scores are summed over
 * ranks (in rank order, so every rank holds the same bits), the keep
 * tokens with the highest sums are chosen on every rank (ties and NaN:
 * lower token index first, NaN below every number), and only their rows
 * are all-reduced: compressed with *cfg, or exactly (dense) when cfg is
 * NULL. No indices travel. The other rows follow prunePolicy (a local
 * choice). maskOut (tokens bytes, or NULL) gets 1 for kept tokens, 0 for
 * pruned ones: pass it to spcclTokenMaskAllReduce in the backward pass.
 * With cfg->residual (tokens*hidden floats, tensor layout), error feedback
 * applies to the kept rows; pruned rows' residuals are left as they are. */
typedef enum {
  spcclPruneZero = 0,      /* pruned rows are set to 0 */
  spcclPruneKeepLocal = 1, /* pruned rows keep this rank's partial sum */
  spcclNumPrunePolicies = 2,
  spcclPrunePolicy_MaxEnum = 0x7fffffff
} spcclPrunePolicy_t;
spcclResult_t spcclTokenTopkAllReduce(void* buff, const float* scores, size_t tokens, size_t hidden,
                                      spcclDataType_t datatype, spcclRedOp_t op, size_t keep,
                                      const spcclCompression* cfg, spcclPrunePolicy_t prunePolicy,
                                      unsigned char* maskOut, spcclComm_t comm, void* stream);
/* The same with a given mask (1 = keep; the same on every rank, checked):
 * no score exchange; only the masked rows travel. */
spcclResult_t spcclTokenMaskAllReduce(void* buff, const unsigned char* mask, size_t tokens,
                                      size_t hidden, spcclDataType_t datatype, spcclRedOp_t op,
                                      const spcclCompression* cfg, spcclPrunePolicy_t prunePolicy,
                                      spcclComm_t comm, void* stream);
/* Non-blocking forms (spcclTest/spcclWait); *cfg is copied, buff, scores,
 * mask, maskOut and the residual must stay valid until completion. */
spcclResult_t spcclItokenTopkAllReduce(void* buff, const float* scores, size_t tokens,
                                       size_t hidden, spcclDataType_t datatype, spcclRedOp_t op,
                                       size_t keep, const spcclCompression* cfg,
                                       spcclPrunePolicy_t prunePolicy, unsigned char* maskOut,
                                       spcclComm_t comm, spcclRequest_t* request);
spcclResult_t spcclItokenMaskAllReduce(void* buff, const unsigned char* mask, size_t tokens,
                                       size_t hidden, spcclDataType_t datatype, spcclRedOp_t op,
                                       const spcclCompression* cfg, spcclPrunePolicy_t prunePolicy,
                                       spcclComm_t comm, spcclRequest_t* request);

/* ---- micro-batch planner (AccTFM section 4.2.2, Algorithm 1) ----
 * Chooses each layer's partition size from {1, 2, 4} so that the compute of
 * one micro-batch overlaps the all-reduce of the previous one. A layer's
 * micro-batch of K computes for computeSeconds/K and communicates for
 * alpha + beta * commBytes/K (Eq. 3, the algorithm's c1, c2 folded into
 * alpha, beta). backward != 0 plans the backward pass (layers in reverse
 * order); outSizes[l] is always layer l's size. *outSeconds (may be NULL)
 * gets the plan's predicted completion time. */
typedef struct {
  double computeSeconds; /* the layer's computation for the whole batch */
  double commBytes;      /* bytes of its all-reduce for the whole batch */
} spcclLayerCost;
spcclResult_t spcclPlanPartitions(const spcclLayerCost* layers, int nLayers, double alpha,
                                  double beta, int backward, int* outSizes, double* outSeconds);

/* ---- load-balancing collectives (docs/algorithms.md 4 and 5) ----
 * SEMI-migration (section IV): a straggler of a tensor-parallel
 * group sheds some of its columns to the other ranks (the helpers). The
 * straggler broadcasts the shed data along a pipelined tree in which
 * receivers relay, so it sends each byte once; helper r computes the slice
 * spcclMigrateSlice names; the results come back by a reduce, or, when the
 * layer ends in an all-reduce anyway, inside that all-reduce
 * (spcclMigrateAllReduce). Scatter and gather are the alternative to compare
 * against. These calls run at once (also between GroupStart/GroupEnd).
 * Ranks that disagree on a call's kind, count, type or op fail with
 * spcclInvalidUsage naming the differing rank; ranks that disagree on the
 * straggler, dest or root fail together before any data moves (see the
 * rooted calls above). */

/* buff: the straggler's data on the straggler, count elements received
 * elsewhere. The tree's root has a single child, so the straggler sends
 * count elements once whatever the rank count. */
spcclResult_t spcclMigrateBroadcast(void* buff, size_t count, spcclDataType_t datatype,
                                    int straggler, spcclComm_t comm, void* stream);
/* The columns [*begin, *begin + *length) of the `total` migrated columns
 * that this rank computes: renumbering r' = (r + e - straggler) mod e,
 * helper r' takes block r' - 1 of total cut into e - 1 nearly equal blocks
 * (the first total mod (e - 1) blocks one column more), so every column is
 * computed exactly once. The straggler gets *length 0. Local: no messages. */
spcclResult_t spcclMigrateSlice(spcclComm_t comm, int straggler, size_t total, size_t* begin,
                                size_t* length);
/* Tree reduce of every rank's sendbuff into recvbuff at dest (the
 * straggler collecting its migrated results: helpers send their results
 * placed at their slice, zero elsewhere; dest's own sendbuff takes part,
 * in place allowed). dest receives count elements once. */
spcclResult_t spcclMigrateReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 spcclDataType_t datatype, spcclRedOp_t op, int dest,
                                 spcclComm_t comm, void* stream);
/* The merged form (reduce merging, section IV-A): recvbuff = AllReduce of
 * every rank's contribution, where a rank's contribution is sendbuff with
 * its migrated partial result folded in by op at
 * [migratedOffset, migratedOffset + migratedCount). One collective, and the
 * fold is part of the pass that copies sendbuff into recvbuff. migratedCount
 * may differ between ranks (0 on the straggler); count may not. */
spcclResult_t spcclMigrateAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    const void* migrated, size_t migratedCount,
                                    size_t migratedOffset, spcclDataType_t datatype,
                                    spcclRedOp_t op, spcclComm_t comm, void* stream);
/* Non-blocking forms of the three (spcclTest/spcclWait; no stream). They
 * run in issue order with the communicator's other work, so a straggler can
 * broadcast its shed columns while it computes its own, and a helper can
 * compute its own columns while the shed ones arrive: the transfer overlaps
 * the compute (docs/migration.md). The buffers must stay untouched until the
 * request completes. */
spcclResult_t spcclImigrateBroadcast(void* buff, size_t count, spcclDataType_t datatype,
                                     int straggler, spcclComm_t comm, spcclRequest_t* request);
spcclResult_t spcclImigrateReduce(const void* sendbuff, void* recvbuff, size_t count,
                                  spcclDataType_t datatype, spcclRedOp_t op, int dest,
                                  spcclComm_t comm, spcclRequest_t* request);
spcclResult_t spcclImigrateAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                     const void* migrated, size_t migratedCount,
                                     size_t migratedOffset, spcclDataType_t datatype,
                                     spcclRedOp_t op, spcclComm_t comm, spcclRequest_t* request);
/* MPI semantics: root's sendbuff holds nranks * recvcount elements, rank r
 * gets block r (root's own block is copied locally); the root sends every
 * block itself (peer-to-peer, no relaying). */
spcclResult_t spcclScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                           spcclDataType_t datatype, int root, spcclComm_t comm, void* stream);
/* root's recvbuff gets nranks * sendcount elements, rank r's at block r. */
spcclResult_t spcclGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                          spcclDataType_t datatype, int root, spcclComm_t comm, void* stream);

/* The planner (SEMI-migration: Eq. (1), (2), (3), Algorithm 2). Cost functions
 * are lines a + b*c seconds for c columns, fitted from the caller's (or a
 * pre-test's) measurements with spcclFitLinearCost. */
#define SPCCL_BALANCE_COST_MODEL_MAGIC 0x42414c43u /* "BALC" */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  /* A rank straggles when T_i > T_min * (1 + tolerance); 0 is the paper's
   * strict T_i > T_min, which measurement noise makes everyone fail. */
  double stragglerTolerance;
  double omega1;    /* Omega_1: static allocation cost of resizing (seconds) */
  double omega2[2]; /* Omega_2(c): extracting c columns for resizing */
  double phi1[2];   /* Phi_1(c): sending c migrated columns and collecting results */
  double phi2[2];   /* Phi_2(c): a helper computing c columns; {0, 0}: the
                     * helpers' measured speed, max_y T_y / L_y (as in Eq. (3)) */
} spcclBalanceCostModel_t;
#define SPCCL_BALANCE_COST_MODEL_INITIALIZER                                                   \
  {                                                                                            \
    sizeof(spcclBalanceCostModel_t), SPCCL_BALANCE_COST_MODEL_MAGIC, SPCCL_VERSION_CODE, 0.05, \
        0.0, {0.0, 0.0}, {0.0, 0.0}, {                                                         \
      0.0, 0.0                                                                                 \
    }                                                                                          \
  }

typedef enum {
  spcclBalanceKeep = 0,             /* not a straggler (or nothing to shed) */
  spcclBalanceMigrate = 1,          /* sheds migrateColumns to the helpers */
  spcclBalanceResize = 2,           /* prunes resizeColumns (ZERO-resizing) */
  spcclBalanceMigrateAndResize = 3, /* the single heavy straggler of Eq. (2) */
  spcclBalanceAction_MaxEnum = 0x7fffffff
} spcclBalanceAction_t;

typedef struct {
  spcclBalanceAction_t action;
  double iterTime;       /* T_i, as gathered */
  double matmulTime;     /* M_i */
  size_t columns;        /* L_i */
  double gamma;          /* Eq. (1) against T_min: (T_i - T_min) / M_i, in [0, 1] */
  size_t migrateColumns; /* shed to the helpers (spcclBalanceSlice) */
  size_t resizeColumns;  /* pruned */
} spcclBalanceRank_t;

typedef struct {
  size_t size;               /* set by the caller: sizeof(spcclBalancePlan_t) */
  spcclBalanceRank_t* ranks; /* set by the caller: room for `capacity` ranks */
  int capacity;
  int nranks; /* filled: ranks[0 .. nranks) */
  double tMin;
  int stragglers; /* z */
  int migrators;  /* x of Eq. (3) (1 or 0 when z == 1) */
  double beta;    /* Eq. (2): the share migrated when z == 1, else 0 */
} spcclBalancePlan_t;

/* Collective: all-gathers (iterTime, matmulTime, columns) and computes the
 * plan from the gathered values, so every rank returns the same plan. A
 * bad value on any rank (NaN, negative, matmulTime > iterTime, columns 0)
 * fails every rank with spcclInvalidArgument naming that rank. */
spcclResult_t spcclBalancePlan(spcclComm_t comm, double iterTime, double matmulTime, size_t columns,
                               const spcclBalanceCostModel_t* costModel, spcclBalancePlan_t* plan);
/* The columns of `migrator`'s migrateColumns that `rank` computes: the
 * helpers are the ranks that do not migrate, renumbered from the migrator
 * as in spcclMigrateSlice (identical to it with one migrator). */
spcclResult_t spcclBalanceSlice(const spcclBalancePlan_t* plan, int migrator, int rank,
                                size_t* begin, size_t* length);
/* Least-squares line through n >= 1 points: coefficients = {a, b} of
 * a + b*x (n == 1 or all x equal: b = 0, a = mean y). */
spcclResult_t spcclFitLinearCost(const double* x, const double* y, int n, double coefficients[2]);

/* Stage rebalancing (DynPipe, sections 3.4-3.5): contiguous
 * layers onto pipeline stages. Local computations; the layer moves they
 * imply are spcclSend/spcclRecv of the layers' buffers. */
typedef enum {
  spcclStagePartitionByTime = 0,       /* minimise the slowest stage's time (exact) */
  spcclStagePartitionByParameters = 1, /* minimise the largest stage's parameters (layerMem) */
  spcclStageDiffusion = 2,             /* move boundary layers between neighbours until
                                        * no move helps, from the given partition */
  spcclStageNumMethods = 3,
  spcclStageMethod_MaxEnum = 0x7fffffff
} spcclStageMethod_t;

typedef struct {
  double maxStageCost;   /* the bottleneck stage's summed layerCosts */
  double maxStageMemory; /* the largest stage's summed layerMem */
  int rounds;            /* diffusion rounds run (0 otherwise) */
  int roundBound;        /* Lemma 2's bound on the rounds (diffusion) */
} spcclStagePartitionInfo_t;

/* stageOfLayer[nLayers]: out, non-decreasing, every stage non-empty;
 * for diffusion also in (the starting partition). layerMem may be NULL
 * (no memory limit) except for ByParameters. memCapacity: per stage, may
 * be INFINITY; a partition that fits is found or the call fails naming
 * the capacity. info may be NULL. */
spcclResult_t spcclStagePartition(const double* layerCosts, const double* layerMem, int nLayers,
                                  int nStages, double memCapacity, spcclStageMethod_t method,
                                  int* stageOfLayer, spcclStagePartitionInfo_t* info);
/* First-fit re-packing onto fewer stages (section 3.5): the first pair of
 * neighbouring stages whose memory fits one stage is merged, repeatedly,
 * until none fits or *newStages reaches targetStages (0: as few as
 * possible). Never exceeds memCapacity; a stage that already exceeds it is
 * an error. */
spcclResult_t spcclRepack(const double* layerMem, const int* stageOfLayer, int nLayers, int nStages,
                          double memCapacity, int targetStages, int* newStageOfLayer,
                          int* newStages);

/* ---- helpers ---- */
/* Size in bytes of one element of datatype, 0 if the type is invalid. */
size_t spcclTypeSize(spcclDataType_t datatype);
const char* spcclTypeName(spcclDataType_t datatype);
const char* spcclOpName(spcclRedOp_t op);
/* The library's short name of an enumerator, as its logs, the perf
 * binaries' flags and reports, and the MPI interposer's report spell it
 * (e.g. "bp" for spcclSparseBalancedParallelism, "two-shot" for
 * spcclCompressTwoShot; "auto" for the Auto values). Any other value gives
 * "unknown". Never NULL; the strings are static. */
const char* spcclSparseAlgorithmName(spcclSparseAlgorithm_t algorithm);
const char* spcclSparseEncodingName(spcclSparseEncoding_t encoding);
const char* spcclSparsePartitionerName(spcclSparsePartitioner_t partitioner);
const char* spcclCodecName(spcclCodec_t codec);
const char* spcclCompressScheduleName(spcclCompressSchedule_t schedule);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPCCL_H_ */
