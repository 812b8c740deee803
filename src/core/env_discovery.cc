#include "core/env_discovery.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/check.h"
#include "base/log.h"

namespace spccl {
namespace {

// One launcher's variables. Each role lists alternative names; the first
// that is set wins.
struct LauncherSource {
  const char* name;
  std::vector<const char*> rankVars;
  std::vector<const char*> sizeVars;
  std::vector<const char*> localRankVars;
  bool explicitRequest;  // set only by people or tools that mean spccl
};

const std::vector<LauncherSource>& launcherSources() {
  static const std::vector<LauncherSource> sources = {
      {"spccl", {kEnvRank}, {kEnvNranks}, {kEnvLocalRank}, true},
      {"torchrun", {"RANK"}, {"WORLD_SIZE"}, {"LOCAL_RANK"}, false},
      {"openmpi",
       {"OMPI_COMM_WORLD_RANK"},
       {"OMPI_COMM_WORLD_SIZE"},
       {"OMPI_COMM_WORLD_LOCAL_RANK"},
       false},
      {"pmi", {"PMI_RANK", "PMIX_RANK"}, {"PMI_SIZE"}, {"MPI_LOCALRANKID"}, false},
      {"slurm", {"SLURM_PROCID"}, {"SLURM_NTASKS", "SLURM_NPROCS"}, {"SLURM_LOCALID"}, false},
  };
  return sources;
}

struct Variable {
  const char* name;
  std::string value;
};

std::optional<Variable> firstSet(const EnvLookup& lookup, const std::vector<const char*>& names) {
  for (const char* name : names) {
    std::optional<std::string> value = lookup(name);
    if (value && !value->empty()) return Variable{name, *value};
  }
  return std::nullopt;
}

// Strict decimal int: no sign-only, no trailing text, no overflow.
std::optional<int64_t> toInteger(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE || value < INT32_MIN ||
      value > INT32_MAX)
    return std::nullopt;
  return value;
}

// Decimal digits only, at most 19 of them (no overflow of uint64_t).
std::optional<uint64_t> toUnsigned(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::strtoull(text.c_str(), nullptr, 10);
}

spcclResult_t parseInteger(const Variable& var, int64_t* out) {
  std::optional<int64_t> value = toInteger(var.value);
  if (!value)
    return SPCCL_FAIL(spcclInvalidArgument, "%s=%s is not an integer", var.name, var.value.c_str());
  *out = *value;
  return spcclSuccess;
}

// `offset` is added to the value; the sum must still be a port.
spcclResult_t parsePort(const Variable& var, int offset, int* out) {
  std::optional<int64_t> port = toInteger(var.value);
  if (!port || *port < 1 || *port + offset > 65535)
    return SPCCL_FAIL(spcclInvalidArgument, "%s=%s is not a port: must be in [1, %d]", var.name,
                      var.value.c_str(), 65535 - offset);
  *out = static_cast<int>(*port + offset);
  return spcclSuccess;
}

// Finds the first source whose rank and size are both set.
spcclResult_t pickSource(const EnvLookup& lookup, const LauncherSource** source, Variable* rank,
                         Variable* size) {
  std::string firstPartial;
  for (const LauncherSource& candidate : launcherSources()) {
    std::optional<Variable> rankVar = firstSet(lookup, candidate.rankVars);
    if (!rankVar) continue;
    std::optional<Variable> sizeVar = firstSet(lookup, candidate.sizeVars);
    if (sizeVar) {
      *source = &candidate;
      *rank = *rankVar;
      *size = *sizeVar;
      return spcclSuccess;
    }
    std::string partial = std::string(rankVar->name) + "=" + rankVar->value + " is set but " +
                          candidate.sizeVars.front() + " is not";
    if (candidate.explicitRequest)
      return SPCCL_FAIL(spcclInvalidUsage, "%s (%s launch)", partial.c_str(), candidate.name);
    SPCCL_INFO(kLogEnv, "ignoring %s launch variables: %s", candidate.name, partial.c_str());
    if (firstPartial.empty()) firstPartial = partial;
  }
  if (!firstPartial.empty())
    return SPCCL_FAIL(spcclInvalidUsage, "incomplete launcher variables: %s", firstPartial.c_str());
  return SPCCL_FAIL(spcclInvalidUsage,
                    "no launcher variables found: run under spcclrun, torchrun, mpirun or srun, "
                    "or set %s, %s and %s",
                    kEnvRank, kEnvNranks, kEnvCommId);
}

spcclResult_t readRanks(const EnvLookup& lookup, const LauncherSource& source,
                        const Variable& rankVar, const Variable& sizeVar, LaunchEnv* out) {
  int64_t rank = 0, nranks = 0;
  SPCCL_CHECK(parseInteger(rankVar, &rank));
  SPCCL_CHECK(parseInteger(sizeVar, &nranks));
  if (nranks < 1)
    return SPCCL_FAIL(spcclInvalidArgument, "%s=%s: the number of ranks must be at least 1",
                      sizeVar.name, sizeVar.value.c_str());
  if (rank < 0 || rank >= nranks)
    return SPCCL_FAIL(spcclInvalidArgument, "%s=%s is out of range: must be in [0, %s=%s)",
                      rankVar.name, rankVar.value.c_str(), sizeVar.name, sizeVar.value.c_str());
  int64_t localRank = -1;
  if (std::optional<Variable> localVar = firstSet(lookup, source.localRankVars)) {
    SPCCL_CHECK(parseInteger(*localVar, &localRank));
    if (localRank < 0 || localRank >= nranks)
      return SPCCL_FAIL(spcclInvalidArgument, "%s=%s is out of range: must be in [0, %s=%s)",
                        localVar->name, localVar->value.c_str(), sizeVar.name,
                        sizeVar.value.c_str());
  }
  out->rank = static_cast<int>(rank);
  out->nranks = static_cast<int>(nranks);
  out->localRank = static_cast<int>(localRank);
  return spcclSuccess;
}

// The first host of a Slurm hostlist such as "node[07-12,20],gpu3" or
// "rack[1-2]-n[01-04]": the text before the first top-level comma, with
// each bracket group replaced by the low end of its first range (Slurm
// keeps the zero padding of that bound: "n[01-04]" starts at "n01").
std::optional<std::string> firstSlurmHost(const std::string& hostlist) {
  std::string host;
  for (size_t i = 0; i < hostlist.size(); ++i) {
    char c = hostlist[i];
    if (c == ',') break;
    if (c != '[') {
      if (c == ']') return std::nullopt;
      host += c;
      continue;
    }
    size_t close = hostlist.find(']', i);
    if (close == std::string::npos) return std::nullopt;
    std::string ranges = hostlist.substr(i + 1, close - i - 1);
    std::string low = ranges.substr(0, ranges.find_first_of(",-"));
    if (low.empty() || low.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    host += low;
    i = close;
  }
  if (host.empty()) return std::nullopt;
  return host;
}

// srun gives no rendezvous address, but enough to agree on one without a
// side channel (the way PyTorch Lightning finds MASTER_ADDR under Slurm):
// - host: task 0 runs on the first node of SLURM_STEP_NODELIST under every
//   distribution but "arbitrary" (block, cyclic and plane all put task 0 on
//   the step's node 0); rank 0 checks that against SLURMD_NODENAME;
// - port: the step's first reserved port (SLURM_STEP_RESV_PORTS, srun
//   --resv-ports with MpiParams=ports=...), else one derived from the job
//   and step ids below the usual ephemeral range, so that the steps of one
//   job and jobs started one after the other get different ports.
spcclResult_t readSlurmRendezvous(const EnvLookup& lookup, LaunchEnv* out) {
  std::optional<Variable> nodes = firstSet(lookup, {"SLURM_STEP_NODELIST"});
  if (!nodes)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "slurm launch without SLURM_STEP_NODELIST (not a task of srun?) gives no "
                      "rendezvous address: set %s=host:port (rank 0 listens there), or "
                      "MASTER_ADDR and MASTER_PORT",
                      kEnvCommId);
  std::optional<std::string> host = firstSlurmHost(nodes->value);
  if (!host)
    return SPCCL_FAIL(spcclInvalidArgument, "%s=%s is not a Slurm hostlist (or set %s=host:port)",
                      nodes->name, nodes->value.c_str(), kEnvCommId);
  if (out->rank == 0) {
    std::optional<Variable> self = firstSet(lookup, {"SLURMD_NODENAME"});
    if (self && self->value != *host)
      return SPCCL_FAIL(spcclInvalidUsage,
                        "rank 0 runs on %s=%s, not on %s, the first node of %s=%s (srun "
                        "--distribution=arbitrary?): set %s=host:port",
                        self->name, self->value.c_str(), host->c_str(), nodes->name,
                        nodes->value.c_str(), kEnvCommId);
  }
  out->rootHost = *host;
  if (std::optional<Variable> reserved = firstSet(lookup, {"SLURM_STEP_RESV_PORTS"})) {
    // "12000-12003" or "12000,12005": the first port.
    std::optional<int64_t> first =
        toInteger(reserved->value.substr(0, reserved->value.find_first_of(",-")));
    if (!first || *first < 1 || *first > 65535)
      return SPCCL_FAIL(spcclInvalidArgument, "%s=%s does not start with a port", reserved->name,
                        reserved->value.c_str());
    out->rootPort = static_cast<int>(*first);
    return spcclSuccess;
  }
  std::optional<Variable> job = firstSet(lookup, {"SLURM_JOB_ID", "SLURM_JOBID"});
  if (!job)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "slurm launch without SLURM_JOB_ID: no rendezvous port to derive; set "
                      "%s=host:port",
                      kEnvCommId);
  std::optional<uint64_t> jobId = toUnsigned(job->value);
  if (!jobId)
    return SPCCL_FAIL(spcclInvalidArgument, "%s=%s is not a job id", job->name, job->value.c_str());
  uint64_t stepId = 0;  // an unreadable step id only costs the steps their own ports
  if (std::optional<Variable> step = firstSet(lookup, {"SLURM_STEP_ID", "SLURM_STEPID"}))
    stepId = toUnsigned(step->value).value_or(0);
  const uint64_t slot =
      (*jobId * kSlurmPortStepsPerJob + stepId % kSlurmPortStepsPerJob) % kSlurmPortSpan;
  out->rootPort = kSlurmPortBase + static_cast<int>(slot);
  return spcclSuccess;
}

spcclResult_t readRendezvous(const EnvLookup& lookup, const LauncherSource& source,
                             LaunchEnv* out) {
  if (std::optional<Variable> commId = firstSet(lookup, {kEnvCommId}))
    return splitHostPort(commId->name, commId->value, &out->rootHost, &out->rootPort);
  std::optional<Variable> addr = firstSet(lookup, {"MASTER_ADDR"});
  std::optional<Variable> port = firstSet(lookup, {"MASTER_PORT"});
  if (addr && port) {
    out->rootHost = addr->value;
    if (out->rootHost.size() > 2 && out->rootHost.front() == '[' && out->rootHost.back() == ']')
      out->rootHost = out->rootHost.substr(1, out->rootHost.size() - 2);
    return parsePort(*port, kMasterPortOffset, &out->rootPort);
  }
  if (addr || port) {
    const Variable& given = addr ? *addr : *port;
    return SPCCL_FAIL(spcclInvalidUsage, "%s=%s is set but %s is not (or set %s=host:port)",
                      given.name, given.value.c_str(), addr ? "MASTER_PORT" : "MASTER_ADDR",
                      kEnvCommId);
  }
  if (std::string(source.name) == "slurm") return readSlurmRendezvous(lookup, out);
  return SPCCL_FAIL(spcclInvalidUsage,
                    "%s launch gives no rendezvous address: set %s=host:port (rank 0 listens "
                    "there), or MASTER_ADDR and MASTER_PORT",
                    source.name, kEnvCommId);
}

// SPCCL_JOB_SECRET_FILE, else SPCCL_JOB_SECRET; never derived from the
// launcher's variables (anyone on the cluster can read those). Without
// either, only SPCCL_AUTH=off lets the job run.
spcclResult_t readSecret(const EnvLookup& lookup, LaunchEnv* out) {
  if (std::optional<Variable> file = firstSet(lookup, {kEnvJobSecretFile})) {
    SPCCL_CHECK(readJobSecretFile(file->value, &out->secret));
    out->secretOrigin = kEnvJobSecretFile;
    return spcclSuccess;
  }
  if (std::optional<Variable> secret = firstSet(lookup, {kEnvJobSecret})) {
    SPCCL_CHECK(parseJobSecret(secret->value, secret->name, &out->secret));
    out->secretOrigin = kEnvJobSecret;
    return spcclSuccess;
  }
  std::optional<Variable> auth = firstSet(lookup, {"SPCCL_AUTH"});
  if (auth && auth->value == "off") {
    out->secretOrigin = "none (SPCCL_AUTH=off)";
    return spcclSuccess;
  }
  return SPCCL_FAIL(spcclInvalidArgument,
                    "%s launch without a job secret: set SPCCL_JOB_SECRET_FILE (a 0600 file with "
                    "64 hex digits) or SPCCL_JOB_SECRET on every rank (spcclrun draws one; see "
                    "docs/security.md), or SPCCL_AUTH=off to run unauthenticated",
                    out->source.c_str());
}

}  // namespace

spcclResult_t discoverLaunchEnv(const EnvLookup& lookup, LaunchEnv* out) {
  if (out == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "discoverLaunchEnv: out is NULL");
  const LauncherSource* source = nullptr;
  Variable rankVar, sizeVar;
  SPCCL_CHECK(pickSource(lookup, &source, &rankVar, &sizeVar));
  LaunchEnv env;
  env.source = source->name;
  SPCCL_CHECK(readRanks(lookup, *source, rankVar, sizeVar, &env));
  SPCCL_CHECK(readRendezvous(lookup, *source, &env));
  SPCCL_CHECK(readSecret(lookup, &env));
  SPCCL_INFO(kLogEnv, "%s launch: rank %d of %d (local rank %d), root %s, job secret from %s",
             env.source.c_str(), env.rank, env.nranks, env.localRank,
             formatHostPort(env.rootHost, env.rootPort).c_str(), env.secretOrigin.c_str());
  *out = std::move(env);
  return spcclSuccess;
}

spcclResult_t discoverLaunchEnv(const EnvMap& env, LaunchEnv* out) {
  return discoverLaunchEnv(
      [&env](const std::string& name) -> std::optional<std::string> {
        auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      out);
}

spcclResult_t discoverLaunchEnv(LaunchEnv* out) {
  return discoverLaunchEnv(
      [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
      },
      out);
}

std::string formatHostPort(const std::string& host, int port) {
  bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

spcclResult_t splitHostPort(const char* variable, const std::string& text, std::string* host,
                            int* port) {
  std::string hostPart, portPart;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return SPCCL_FAIL(spcclInvalidArgument, "%s=%s is not [ipv6-address]:port", variable,
                        text.c_str());
    hostPart = text.substr(1, close - 1);
    portPart = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos)
      return SPCCL_FAIL(spcclInvalidArgument, "%s=%s is not host:port", variable, text.c_str());
    hostPart = text.substr(0, colon);
    portPart = text.substr(colon + 1);
    if (hostPart.find(':') != std::string::npos)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s=%s is ambiguous: write an IPv6 address as [address]:port", variable,
                        text.c_str());
  }
  if (hostPart.empty())
    return SPCCL_FAIL(spcclInvalidArgument, "%s=%s has no host before the port", variable,
                      text.c_str());
  std::optional<int64_t> parsedPort = toInteger(portPart);
  if (!parsedPort || *parsedPort < 1 || *parsedPort > 65535)
    return SPCCL_FAIL(spcclInvalidArgument, "%s=%s: port '%s' is not in [1, 65535]", variable,
                      text.c_str(), portPart.c_str());
  *host = hostPart;
  *port = static_cast<int>(*parsedPort);
  return spcclSuccess;
}

}  // namespace spccl
