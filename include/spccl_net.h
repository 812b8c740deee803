/*
 * spccl transport plugin ABI, version 2 (version 1 still loads).
 *
 * A transport moves whole messages between two processes over one-way
 * connections: a sender's sendComm is connected to a receiver's recvComm.
 * tcp and shm are built into libspccl; other transports (ucx, ib, cuda_ipc)
 * are shared objects "libspccl-net-<name>.so" exporting a symbol
 * SPCCL_NET_PLUGIN_SYMBOL ("spcclNetPlugin_v2") of type spcclNet_v2_t, or,
 * for plugins built against version 1, SPCCL_NET_PLUGIN_SYMBOL_V1 of type
 * spcclNet_v1_t. The registry prefers v2 and runs a v1 table as a
 * transport with one device.
 *
 * Version 2 adds devices (NICs, ports): a transport lists the devices it
 * will use, closest to the calling process first, and listens and connects
 * on a given one. The engine opens connections on several devices to one
 * peer (rails) and stripes large messages across them.
 *
 * Rules every transport follows:
 *  - Nothing blocks. connect/accept/isend/irecv return at once; progress
 *    happens inside test().
 *  - Messages on one comm complete in the order they were posted; at most
 *    SPCCL_NET_MAX_REQUESTS may be outstanding per comm.
 *  - A message larger than the receiver's posted capacity fails that
 *    receive with spcclRemoteError (oversize); nothing is truncated silently.
 *  - A peer that goes away fails pending requests with spcclRemoteError.
 *  - pollFd() gives the engine something to sleep on instead of spinning:
 *    a file descriptor and poll(2) events that become ready when test()
 *    may make progress. A transport without one returns fd = -1, and the
 *    engine then polls it with a short sleep.
 */
#ifndef SPCCL_NET_H_
#define SPCCL_NET_H_

#include <stddef.h>
#include <stdint.h>

#include "spccl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPCCL_NET_ABI_VERSION 2
#define SPCCL_NET_HANDLE_MAXSIZE 128
#define SPCCL_NET_MAX_REQUESTS 8
#define SPCCL_NET_MAX_DEVICES 8
#define SPCCL_NET_PLUGIN_SYMBOL "spcclNetPlugin_v2"
#define SPCCL_NET_PLUGIN_SYMBOL_V1 "spcclNetPlugin_v1"

typedef enum {
  SPCCL_NET_LOG_WARN = 1,
  SPCCL_NET_LOG_INFO = 2,
  SPCCL_NET_LOG_TRACE = 3
} spcclNetLogLevel_t;

/* Logger handed to the plugin at init; printf-style. */
typedef void (*spcclNetLogger_t)(int level, const char* file, int line, const char* fmt, ...);

/* What the engine tells a transport when it is initialised. */
typedef struct {
  spcclNetLogger_t logger;
  const char* socketIfname; /* interface selection, NCCL syntax; may be NULL */
  int timeoutMs;            /* for internal handshakes */
} spcclNetInitArgs_v1_t;

/* Version 1: one device per transport. */
typedef struct {
  const char* name; /* "tcp", "shm", ... */
  int abiVersion;   /* 1 */

  spcclResult_t (*init)(const spcclNetInitArgs_v1_t* args);
  /* Opens a listening endpoint. Writes up to SPCCL_NET_HANDLE_MAXSIZE bytes
   * into handle: everything a peer needs to connect. */
  spcclResult_t (*listen)(void* handle, void** listenComm);
  /* Starts a connection to a peer's handle. *sendComm is set at once. */
  spcclResult_t (*connect)(const void* handle, void** sendComm);
  /* Sets *recvComm to the next incoming connection, or NULL if none yet. */
  spcclResult_t (*accept)(void* listenComm, void** recvComm);
  /* Registration for transports that need pinned/registered memory (RDMA).
   * Transports that do not set *mhandle = NULL. mhandle may be NULL below. */
  spcclResult_t (*regMr)(void* comm, void* data, size_t size, void** mhandle);
  spcclResult_t (*deregMr)(void* comm, void* mhandle);
  spcclResult_t (*isend)(void* sendComm, const void* data, size_t size, void* mhandle,
                         void** request);
  spcclResult_t (*irecv)(void* recvComm, void* data, size_t capacity, void* mhandle,
                         void** request);
  /* *done = 1 when the request finished; then *size holds the bytes moved
   * and the request is released. An error also releases it. */
  spcclResult_t (*test)(void* request, int* done, size_t* size);
  /* Something to poll(2) on while waiting for progress on comm. */
  spcclResult_t (*pollFd)(void* comm, int* fd, short* events);
  /* Human-readable peer (or local, for listen comms) address, "host:port". */
  spcclResult_t (*describe)(void* comm, char* buf, size_t len);
  spcclResult_t (*closeSend)(void* sendComm);
  spcclResult_t (*closeRecv)(void* recvComm);
  spcclResult_t (*closeListen)(void* listenComm);
} spcclNet_v1_t;

typedef spcclNetInitArgs_v1_t spcclNetInitArgs_v2_t;

/* Kinds of memory a device can send from and receive into (ptrSupport),
 * and the type argument of regMr. */
#define SPCCL_PTR_HOST 0x1
#define SPCCL_PTR_CUDA 0x2   /* GPU memory registered directly (GPUDirect RDMA, peer memory) */
#define SPCCL_PTR_DMABUF 0x4 /* GPU memory registered through a dma-buf fd (regMrDmaBuf) */

/* What a device is, for logs and for choosing rails. */
typedef struct {
  char name[64];     /* "eth1", "mlx5_0:1" */
  char pciPath[256]; /* its PCI device in sysfs, "" when it has none (lo, veth, shm) */
  int speedMbps;     /* link rate, 0 when unknown */
  int ptrSupport;    /* SPCCL_PTR_* bits */
} spcclNetProperties_v2_t;

/* Version 2: the v1 table with devices and typed memory registration
 * (GPU memory for GPUDirect RDMA). Every function not commented here
 * behaves as in version 1. */
typedef struct {
  const char* name;
  int abiVersion; /* 2 */

  spcclResult_t (*init)(const spcclNetInitArgs_v2_t* args);
  /* How many devices this transport uses on this host (>= 1 after a
   * successful init, at most SPCCL_NET_MAX_DEVICES), closest to the
   * calling process first: device 0 is the one a single-rail job uses. */
  spcclResult_t (*devices)(int* ndev);
  spcclResult_t (*getProperties)(int dev, spcclNetProperties_v2_t* props);
  /* listen/connect on device dev (0 <= dev < ndev). The peer's handle names
   * the peer's device; the two need not have the same index. */
  spcclResult_t (*listen)(int dev, void* handle, void** listenComm);
  spcclResult_t (*connect)(int dev, const void* handle, void** sendComm);
  spcclResult_t (*accept)(void* listenComm, void** recvComm);
  /* type: SPCCL_PTR_HOST, or SPCCL_PTR_CUDA where the device's ptrSupport
   * has it; any other type fails with spcclInvalidArgument. */
  spcclResult_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
  /* GPU memory exported as a dma-buf (fd, offset into it). NULL in
   * transports that never have SPCCL_PTR_DMABUF. Tables are static, so
   * where it is set a device without SPCCL_PTR_DMABUF fails it with
   * spcclInvalidArgument (ib sets it always). */
  spcclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  spcclResult_t (*deregMr)(void* comm, void* mhandle);
  spcclResult_t (*isend)(void* sendComm, const void* data, size_t size, void* mhandle,
                         void** request);
  spcclResult_t (*irecv)(void* recvComm, void* data, size_t capacity, void* mhandle,
                         void** request);
  spcclResult_t (*test)(void* request, int* done, size_t* size);
  spcclResult_t (*pollFd)(void* comm, int* fd, short* events);
  spcclResult_t (*describe)(void* comm, char* buf, size_t len);
  spcclResult_t (*closeSend)(void* sendComm);
  spcclResult_t (*closeRecv)(void* recvComm);
  spcclResult_t (*closeListen)(void* listenComm);
} spcclNet_v2_t;

typedef spcclNet_v2_t spcclNet_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPCCL_NET_H_ */
