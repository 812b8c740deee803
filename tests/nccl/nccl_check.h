/*
 * What the nccl.h test programs (nccl_api_check, nccl_fault_check,
 * nccl_forward_check) share: CHECK, which names the rank and the line and
 * ends the process, and (api, forward, alloc victim) rank 0's unique id
 * handed to the other ranks through a file in ID_DIR named after
 * SPCCL_COMM_ID.
 * One program includes it once: the globals are its own.
 */
#ifndef SPCCL_TESTS_NCCL_CHECK_H
#define SPCCL_TESTS_NCCL_CHECK_H

#include <errno.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int gRank = 0, gNranks = 1, gChecks = 0;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    ++gChecks;                                                        \
    if (!(cond)) {                                                    \
      fprintf(stderr, "rank %d: FAIL at line %d: ", gRank, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, " (%s)\n", #cond);                              \
      exit(1);                                                        \
    }                                                                 \
  } while (0)

/* Rank 0 makes the id (ncclGetUniqueId) and writes it to
 * DIR/ncclid.SPCCL_COMM_ID.TAG (renamed into place whole); the others wait
 * up to 60 s for the file. 0 once *id is shared; else 1, with why it was
 * not in why (nccl_alloc_victim reports it as its own failure). */
static inline int tryShareId(const char* dir, const char* tag, ncclUniqueId* id, char* why,
                             size_t whyBytes) {
  const char* job = getenv("SPCCL_COMM_ID");
  char path[4096], tmp[4200];
  snprintf(path, sizeof(path), "%s/ncclid.%s.%s", dir, job ? job : "local", tag);
  if (gRank == 0) {
    const ncclResult_t r = ncclGetUniqueId(id);
    if (r != ncclSuccess) {
      snprintf(why, whyBytes, "ncclGetUniqueId returned %d (%s): %s", (int)r, ncclGetErrorString(r),
               ncclGetLastError(NULL));
      return 1;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE* f = fopen(tmp, "wb");
    int written = f != NULL && fwrite(id, sizeof(*id), 1, f) == 1;
    if (f != NULL && fclose(f) != 0) written = 0;
    if (!written || rename(tmp, path) != 0) {
      snprintf(why, whyBytes, "cannot write %s: %s", path, strerror(errno));
      return 1;
    }
    return 0;
  }
  for (int waited = 0; waited < 60000; waited += 10) {
    FILE* f = fopen(path, "rb");
    if (f != NULL) {
      const size_t got = fread(id, sizeof(*id), 1, f);
      fclose(f);
      if (got == 1) return 0;
    }
    usleep(10000);
  }
  snprintf(why, whyBytes, "no unique id in %s after 60 s", path);
  return 1;
}

static inline ncclUniqueId shareId(const char* dir, const char* tag) {
  ncclUniqueId id;
  char why[4400];
  CHECK(tryShareId(dir, tag, &id, why, sizeof(why)) == 0, "%s", why);
  return id;
}

#endif
