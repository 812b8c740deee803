/*
 * An LD_PRELOAD allocator that fails one allocation on purpose: the k-th
 * malloc (calloc, realloc, operator new: all reach malloc) after the
 * program calls fail_alloc_arm(), in the rank FAIL_ALLOC_RANK (all ranks
 * when unset). FAIL_ALLOC_AT=k. With FAIL_ALLOC_COUNT=1 it fails nothing
 * and prints, at exit, how many allocations it saw after arming (the
 * sweep's range). FAIL_ALLOC_THREADS=other counts only the allocations of
 * threads other than the one that armed it (spccl's own threads: the
 * fault service, the worker, a non-blocking creation's), which no API
 * call's error can report. FAIL_ALLOC_BACKTRACE=1 prints the failing allocation's
 * call stack (glibc's backtrace_symbols_fd: library and offset, for
 * addr2line). A crash's (SIGSEGV, SIGBUS, SIGABRT) is printed always. For
 * tests/faults/alloc_failure.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* pointer, size_t size);

static int gArmed = 0;
static int gBacktrace = 0;
static int gOtherThreadsOnly = 0;
static pthread_t gArmingThread;
static long gCountdown = -1; /* allocations until the failing one; -1: none */
static long gSeen = 0;

/* A crash's call stack, then the signal's default action (the exit status
 * still says which signal). */
static void printCrash(int signal) {
  void* frames[64];
  fprintf(stderr, "fail_alloc: pid %d, thread %ld: signal %d:\n", (int)getpid(), (long)gettid(),
          signal);
  backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = SIG_DFL;
  sigaction(signal, &action, NULL);
  raise(signal);
}

static void report(void) { fprintf(stderr, "fail_alloc: %ld allocations after arming\n", gSeen); }

void fail_alloc_arm(void) {
  const char* rank = getenv("FAIL_ALLOC_RANK");
  const char* mine = getenv("SPCCL_RANK");
  if (rank != NULL && (mine == NULL || strcmp(rank, mine) != 0)) return;
  if (getenv("FAIL_ALLOC_COUNT") != NULL) atexit(report);
  void* frames[1];
  backtrace(frames, 1); /* loads libgcc now, not inside a failing malloc or a crash */
  gBacktrace = getenv("FAIL_ALLOC_BACKTRACE") != NULL;
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = printCrash;
  sigaction(SIGSEGV, &action, NULL);
  sigaction(SIGBUS, &action, NULL);
  sigaction(SIGABRT, &action, NULL);
  const char* threads = getenv("FAIL_ALLOC_THREADS");
  gOtherThreadsOnly = threads != NULL && strcmp(threads, "other") == 0;
  gArmingThread = pthread_self();
  const char* at = getenv("FAIL_ALLOC_AT");
  gCountdown = at != NULL ? atol(at) : -1;
  gArmed = 1;
}

/* 1: this allocation is the one to fail. */
static int failNow(void) {
  if (!gArmed) return 0;
  if (gOtherThreadsOnly && pthread_equal(pthread_self(), gArmingThread)) return 0;
  __atomic_add_fetch(&gSeen, 1, __ATOMIC_RELAXED);
  if (gCountdown <= 0) return 0;
  if (__atomic_sub_fetch(&gCountdown, 1, __ATOMIC_RELAXED) != 0) return 0;
  if (gBacktrace) {
    void* frames[64];
    fprintf(stderr, "fail_alloc: failing this allocation:\n");
    backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
  }
  return 1;
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
