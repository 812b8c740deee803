// Launch-environment discovery: who am I (rank, nranks, local rank), where is
// the rendezvous root, and which job secret do the ranks share — read from
// the variables the usual launchers set. spcclCommInitFromEnv is built on it.
//
// Sources, first complete one wins:
//   spccl     SPCCL_RANK, SPCCL_NRANKS, SPCCL_LOCAL_RANK      (spcclrun)
//   torchrun  RANK, WORLD_SIZE, LOCAL_RANK
//   openmpi   OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK         (mpirun)
//   pmi       PMI_RANK or PMIX_RANK, PMI_SIZE, MPI_LOCALRANKID (MPICH/Hydra)
//   slurm     SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID        (srun)
// Setting SPCCL_RANK is an explicit request, so a half-set spccl source is
// an error; a half-set foreign source (e.g. a stray RANK, or srun --mpi=pmix
// which sets PMIX_RANK but no PMI_SIZE) is skipped in favour of the next.
//
// Rendezvous root: SPCCL_COMM_ID=host:port ([v6]:port) if set, else
// MASTER_ADDR with MASTER_PORT + 1 — MASTER_PORT itself is already bound by
// torch's TCPStore (torchrun's agent, or init_process_group on rank 0), so
// rank 0 of spccl could not listen there. Under srun with neither, the
// root is derived from the step (readSlurmRendezvous in the .cc): the first
// node of SLURM_STEP_NODELIST (where task 0 runs unless the distribution is
// "arbitrary"; rank 0 checks SLURMD_NODENAME), port SLURM_STEP_RESV_PORTS'
// first (srun --resv-ports) or kSlurmPortBase + (SLURM_JOB_ID * 16 +
// SLURM_STEP_ID % 16) % kSlurmPortSpan.
//
// Job secret (core/handshake.h): SPCCL_JOB_SECRET_FILE (a 0600 file of hex)
// or SPCCL_JOB_SECRET (hex), 128 to 256 bits. It is never derived from the
// launcher's variables: without one, discovery fails unless SPCCL_AUTH=off.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/handshake.h"
#include "spccl.h"

namespace spccl {

// The variables spcclrun sets for its children.
inline constexpr const char* kEnvRank = "SPCCL_RANK";
inline constexpr const char* kEnvNranks = "SPCCL_NRANKS";
inline constexpr const char* kEnvLocalRank = "SPCCL_LOCAL_RANK";
inline constexpr const char* kEnvCommId = "SPCCL_COMM_ID";
inline constexpr const char* kEnvJobSecret = "SPCCL_JOB_SECRET";
inline constexpr const char* kEnvJobSecretFile = "SPCCL_JOB_SECRET_FILE";

// Added to MASTER_PORT when the root comes from MASTER_ADDR/MASTER_PORT
// (see above): that port belongs to torch's rendezvous store.
inline constexpr int kMasterPortOffset = 1;

// Ports derived for srun steps without SPCCL_COMM_ID: 20000..29999, below
// Linux's default ephemeral range (32768..60999), 16 steps per job before
// the next job's ports.
inline constexpr int kSlurmPortBase = 20000;
inline constexpr uint64_t kSlurmPortSpan = 10000;
inline constexpr uint64_t kSlurmPortStepsPerJob = 16;

struct LaunchEnv {
  int rank = -1;
  int nranks = 0;
  int localRank = -1;    // -1: the launcher does not say (e.g. PMI without MPI_LOCALRANKID)
  std::string rootHost;  // name or address; IPv6 without brackets
  int rootPort = 0;
  JobSecret secret;          // empty only with SPCCL_AUTH=off
  std::string secretOrigin;  // the variable it came from, or "none (SPCCL_AUTH=off)"
  std::string source;        // "spccl", "torchrun", "openmpi", "pmi" or "slurm"
};

// Returns the value of a variable, or nullopt when unset. Empty counts as unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
using EnvMap = std::map<std::string, std::string>;

// Pure: reads only through lookup. On failure the message (threadLastError)
// names the missing or invalid variable and its value.
spcclResult_t discoverLaunchEnv(const EnvLookup& lookup, LaunchEnv* out);
spcclResult_t discoverLaunchEnv(const EnvMap& env, LaunchEnv* out);
// The same, from this process's environment.
spcclResult_t discoverLaunchEnv(LaunchEnv* out);

// "host:port", bracketing IPv6 literals: the form SPCCL_COMM_ID takes.
std::string formatHostPort(const std::string& host, int port);
// Splits "host:port" / "[v6]:port"; `variable` names the source in errors.
spcclResult_t splitHostPort(const char* variable, const std::string& text, std::string* host,
                            int* port);

}  // namespace spccl
