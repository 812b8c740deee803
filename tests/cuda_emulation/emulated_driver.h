/* The test side of the emulated CUDA driver (emulated_driver.cc): memory
 * the emulation calls device, pinned or managed memory, streams that run
 * their queue in order on a thread, and counters. Not a GPU. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { EmuCudaDevice = 0, EmuCudaPinnedHost = 1, EmuCudaManaged = 2 };

typedef struct {
  uint64_t copiesToDevice;
  uint64_t copiesFromDevice;
  uint64_t copiesToDeviceDone; /* host-to-device copies that finished on their stream */
  uint64_t hostFunctions;
  uint64_t pinnedAllocations; /* cuMemHostAlloc calls, the pool's misses */
  int64_t liveAllocations;    /* of every kind */
  uint64_t kernelLaunches;    /* cuLaunchKernel calls (host stand-ins, not a GPU) */
  uint64_t bytesToDevice;     /* bytes of the host-to-device copies enqueued */
  uint64_t bytesFromDevice;   /* bytes of the device-to-host copies enqueued */
  uint64_t copiesOnDevice;    /* cuMemcpyAsync calls between two device buffers */
  int64_t openedPeerMappings; /* cuIpcOpenMemHandle mappings not yet closed */
  uint64_t streamSyncs;       /* cuStreamSynchronize calls on a stream that exists */
  /* The row kernels' launches (emulated_row_kernels.h) by the word width
   * each was given (RowsArgs::wordBytes): 16, 4, 1 byte(s). */
  uint64_t rowLaunchesOf16ByteWords;
  uint64_t rowLaunchesOf4ByteWords;
  uint64_t rowLaunchesOfBytes;
  /* Of copiesToDevice, those whose source is pageable host memory (not
   * from cuMemHostAlloc): a real driver stages such a copy and returns
   * only once it is done. */
  uint64_t copiesToDeviceFromPageable;
  /* Launches of Balanced Parallelism's bucketing kernels
   * (emulated_bucket_kernels.h; host stand-ins, not a GPU). */
  uint64_t bucketLaunches;
  /* Bytes of the pinned allocations (cuMemHostAlloc, the pool's misses). */
  uint64_t pinnedBytesAllocated;
  /* Of copiesFromDevice, those whose destination is pageable host memory
   * (not from cuMemHostAlloc): a real driver stages such a copy itself. */
  uint64_t copiesFromDeviceToPageable;
} EmuCudaCounters;

/* The calling thread's current context: set (1) or none (0). */
void emuCudaSetCurrent(int current);
/* Makes `device`'s context current on the calling thread (and the one
 * emuCudaSetCurrent sets there); its memory and streams belong to that
 * device. 0 on success, -1 for a device the emulation does not have
 * (EMU_CUDA_DEVICES, emulated_devices.h). */
int emuCudaSetCurrentDevice(int device);
void* emuCudaAlloc(size_t bytes, int kind);
int emuCudaFree(void* pointer);
void* emuCudaStreamCreate(void);
void emuCudaStreamDestroy(void* stream);
/* fn(userData) in stream order: a stand-in for a kernel. */
int emuCudaLaunch(void* stream, void (*fn)(void*), void* userData);
EmuCudaCounters emuCudaCounters(void);
/* A gate on the device-to-host copies enqueued from now on: the first
 * `passing` of them run, every later one waits on its stream until
 * emuCudaOpenCopyGate (or 10 s, so that a test that fails still ends).
 * Makes the order of copies and network transfers observable without
 * timing them. */
void emuCudaCloseCopyGate(uint64_t passing);
void emuCudaOpenCopyGate(void);
/* The next `count` cuLaunchKernel calls fail with CUDA_ERROR_LAUNCH_FAILED
 * (719), as a kernel that cannot be launched would. */
void emuCudaFailLaunches(int count);
/* The same after `passing` more launches succeed: a failure of a later
 * kernel of a call. */
void emuCudaFailLaunchesAfter(uint64_t passing, int count);
/* The same for cuMemcpyAsync (any direction): after `passing` more
 * succeed, the next `count` fail at enqueue (CUDA_ERROR_INVALID_VALUE). */
void emuCudaFailMemcpyAsyncAfter(uint64_t passing, int count);
/* The same for cuMemcpyDtoHAsync: a copy from the device that cannot be
 * enqueued (a device in a sticky error state). */
void emuCudaFailCopiesToHostAfter(uint64_t passing, int count);
/* The next `count` cuMemAlloc calls fail with CUDA_ERROR_OUT_OF_MEMORY
 * (2), as on a device that is full (emuCudaAlloc, the tests' own
 * allocations, is not affected). */
void emuCudaFailMemAllocs(int count);
/* After `passing` more cuMemAllocAsync calls succeed, the next `count`
 * fail with CUDA_ERROR_OUT_OF_MEMORY (2): stream-ordered memory on a full
 * device. */
void emuCudaFailStreamAllocsAfter(uint64_t passing, int count);
/* While held, cuMemAlloc calls wait (up to 10 s) instead of returning, as
 * a cuMemAlloc that waits for the device would; emuCudaMemAllocsWaiting
 * says how many are waiting now. */
void emuCudaHoldMemAllocs(int hold);
int emuCudaMemAllocsWaiting(void);
/* emuCudaCloseCopyGate's gate for the copies between two device buffers
 * (cuMemcpyAsync): the first `passing` run, later ones wait on their
 * stream until emuCudaOpenDeviceCopyGate (or 10 s). */
void emuCudaCloseDeviceCopyGate(uint64_t passing);
void emuCudaOpenDeviceCopyGate(void);
/* The same gate for kernels: of the cuLaunchKernel calls that succeed from
 * now on, the first `passing` run, later ones wait on their stream until
 * emuCudaOpenLaunchGate (or 10 s). */
void emuCudaCloseLaunchGate(uint64_t passing);
void emuCudaOpenLaunchGate(void);

#ifdef __cplusplus
}
#endif
