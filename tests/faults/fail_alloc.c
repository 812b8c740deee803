/*
 * An LD_PRELOAD allocator that fails one allocation on purpose: the k-th
 * malloc (calloc, realloc, operator new: all reach malloc) after the
 * program calls fail_alloc_arm(), in the rank FAIL_ALLOC_RANK (all ranks
 * when unset). FAIL_ALLOC_AT=k. With FAIL_ALLOC_COUNT=1 it fails nothing
 * and prints, at exit, how many allocations it saw after arming (the
 * sweep's range). For tests/faults/alloc_failure.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* pointer, size_t size);

static int gArmed = 0;
static long gCountdown = -1; /* allocations until the failing one; -1: none */
static long gSeen = 0;

static void report(void) { fprintf(stderr, "fail_alloc: %ld allocations after arming\n", gSeen); }

void fail_alloc_arm(void) {
  const char* rank = getenv("FAIL_ALLOC_RANK");
  const char* mine = getenv("SPCCL_RANK");
  if (rank != NULL && (mine == NULL || strcmp(rank, mine) != 0)) return;
  if (getenv("FAIL_ALLOC_COUNT") != NULL) atexit(report);
  const char* at = getenv("FAIL_ALLOC_AT");
  gCountdown = at != NULL ? atol(at) : -1;
  gArmed = 1;
}

/* 1: this allocation is the one to fail. */
static int failNow(void) {
  if (!gArmed) return 0;
  __atomic_add_fetch(&gSeen, 1, __ATOMIC_RELAXED);
  if (gCountdown <= 0) return 0;
  return __atomic_sub_fetch(&gCountdown, 1, __ATOMIC_RELAXED) == 0;
}

void* malloc(size_t size) {
  if (failNow()) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_malloc(size);
}

void* calloc(size_t count, size_t size) {
  if (failNow()) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_calloc(count, size);
}

void* realloc(void* pointer, size_t size) {
  if (failNow()) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_realloc(pointer, size);
}
