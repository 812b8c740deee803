/* Pipeline stage rebalancing (DynPipe, docs/algorithms.md 5) on spccl's public
 * API. Each rank is one pipeline stage holding a contiguous run of "layers"
 * (a buffer of parameters and a compute cost). Pruning makes the stages
 * unbalanced; every rank measures its layers, the times are shared with an
 * all-reduce, spcclStagePartition (partition by time) computes the same new
 * layout on every rank, the layers that change stage travel with
 * spcclSend/spcclRecv, and the stage times are measured again. Finally
 * spcclRepack says onto how many stages the model would fit.
 *
 *   spcclrun -n 4 ./pipeline_rebalance
 *
 * A layer's compute is a sleep of its cost (so the example measures the
 * same on a busy machine), preceded by a pass over its parameters. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <spccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LAYERS 16
#define PARAMS_PER_LAYER 65536 /* floats */

#define CHECK(call)                                                            \
  do {                                                                         \
    spcclResult_t res_ = (call);                                               \
    if (res_ != spcclSuccess) {                                                \
      fprintf(stderr, "%s failed: %s: %s\n", #call, spcclGetErrorString(res_), \
              spcclGetLastError(NULL));                                        \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs a layer: touches its parameters, then "computes" for cost seconds. */
static double runLayer(float* params, double cost) {
  double start = now(), sum = 0;
  struct timespec pause;
  size_t i;
  for (i = 0; i < PARAMS_PER_LAYER; ++i) sum += params[i];
  pause.tv_sec = (time_t)cost;
  pause.tv_nsec = (long)((cost - (double)pause.tv_sec) * 1e9);
  nanosleep(&pause, NULL);
  return now() - start + (sum == -1.0 ? 1e-9 : 0.0); /* keep the pass */
}

/* Times this rank's stage; layerTimes[l] gets the time of every layer it
 * holds (0 for the others), stageTimes[s] the time of every stage. */
static void measure(spcclComm_t comm, float** params, const double* cost, const int* stageOf,
                    int rank, int nranks, double* layerTimes, double* stageTimes) {
  double mine[LAYERS], stage = 0;
  int l;
  for (l = 0; l < LAYERS; ++l) {
    mine[l] = stageOf[l] == rank ? runLayer(params[l], cost[l]) : 0.0;
    stage += mine[l];
  }
  CHECK(spcclAllReduce(mine, layerTimes, LAYERS, spcclFloat64, spcclSum, comm, NULL));
  CHECK(spcclAllGather(&stage, stageTimes, 1, spcclFloat64, comm, NULL));
  (void)nranks;
}

static void printStages(const char* when, const int* stageOf, const double* stageTimes,
                        int nranks) {
  int s, l;
  double worst = 0, total = 0;
  printf("%s:\n", when);
  for (s = 0; s < nranks; ++s) {
    printf("  stage %d: layers", s);
    for (l = 0; l < LAYERS; ++l)
      if (stageOf[l] == s) printf(" %d", l);
    printf("  -> %.1f ms\n", stageTimes[s] * 1e3);
    if (stageTimes[s] > worst) worst = stageTimes[s];
    total += stageTimes[s];
  }
  printf("  slowest stage %.1f ms (the pipeline's pace); balance %.2f (mean / slowest)\n",
         worst * 1e3, total / nranks / worst);
}

int main(void) {
  spcclComm_t comm = NULL;
  int rank = 0, nranks = 0, l, moved = 0, packedStages = 0;
  int stageOf[LAYERS], newStageOf[LAYERS], packed[LAYERS];
  double cost[LAYERS], layerTimes[LAYERS], layerMem[LAYERS], stageTimes[64];
  float* params[LAYERS];
  spcclStagePartitionInfo_t info;

  CHECK(spcclCommInitFromEnv(&comm, NULL));
  CHECK(spcclCommUserRank(comm, &rank));
  CHECK(spcclCommCount(comm, &nranks));
  if (nranks > 64 || nranks > LAYERS) {
    fprintf(stderr, "pipeline_rebalance: at most %d ranks\n", LAYERS);
    return 1;
  }
  /* An even split by layer count; then pruning leaves the first stages'
   * layers at full cost and thins the later ones. */
  for (l = 0; l < LAYERS; ++l) {
    stageOf[l] = l * nranks / LAYERS;
    cost[l] = 0.004 * (stageOf[l] == 0 ? 1.0 : 1.0 / (1.0 + stageOf[l]));
    layerMem[l] = (double)PARAMS_PER_LAYER * sizeof(float);
    params[l] = NULL;
    if (stageOf[l] == rank) {
      size_t i;
      params[l] = malloc(PARAMS_PER_LAYER * sizeof(float));
      for (i = 0; i < PARAMS_PER_LAYER; ++i) params[l][i] = (float)l;
    }
  }
  measure(comm, params, cost, stageOf, rank, nranks, layerTimes, stageTimes);
  if (rank == 0)
    printStages("before (even layer counts, after pruning)", stageOf, stageTimes, nranks);

  /* Every rank has the same measured layer times, so every rank computes
   * the same layout. */
  CHECK(spcclStagePartition(layerTimes, layerMem, LAYERS, nranks, INFINITY,
                            spcclStagePartitionByTime, newStageOf, &info));

  /* Move the layers whose stage changed: the old owner sends, the new one
   * receives, all in one group so no pair waits on the other. */
  CHECK(spcclGroupStart());
  for (l = 0; l < LAYERS; ++l) {
    if (newStageOf[l] == stageOf[l]) continue;
    ++moved;
    if (stageOf[l] == rank)
      CHECK(spcclSend(params[l], PARAMS_PER_LAYER, spcclFloat32, newStageOf[l], comm, NULL));
    if (newStageOf[l] == rank) {
      params[l] = malloc(PARAMS_PER_LAYER * sizeof(float));
      CHECK(spcclRecv(params[l], PARAMS_PER_LAYER, spcclFloat32, stageOf[l], comm, NULL));
    }
  }
  CHECK(spcclGroupEnd());
  for (l = 0; l < LAYERS; ++l) {
    size_t i;
    if (stageOf[l] == rank && newStageOf[l] != rank) {
      free(params[l]);
      params[l] = NULL;
    }
    if (newStageOf[l] == rank)
      for (i = 0; i < PARAMS_PER_LAYER; ++i)
        if (params[l][i] != (float)l) {
          fprintf(stderr, "rank %d: layer %d arrived corrupted\n", rank, l);
          return 1;
        }
    stageOf[l] = newStageOf[l];
  }

  measure(comm, params, cost, stageOf, rank, nranks, layerTimes, stageTimes);
  if (rank == 0) {
    printf("partition by time: %d layers moved, predicted slowest stage %.1f ms\n", moved,
           info.maxStageCost * 1e3);
    printStages("after", stageOf, stageTimes, nranks);
  }

  /* Re-packing (section 3.5): with room for 8 layers per rank, first fit
   * merges neighbouring stages while they fit. */
  CHECK(spcclRepack(layerMem, stageOf, LAYERS, nranks, 8.0 * PARAMS_PER_LAYER * sizeof(float), 0,
                    packed, &packedStages));
  if (rank == 0)
    printf("repack with room for 8 layers per rank: %d stages instead of %d\n", packedStages,
           nranks);

  for (l = 0; l < LAYERS; ++l) free(params[l]);
  CHECK(spcclCommDestroy(comm));
  return 0;
}
