// Launch-environment discovery over every launcher's variables, their
// priority, and the errors for missing or invalid ones.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "base/check.h"
#include "core/env_discovery.h"

namespace spccl {
namespace {

// Most tests are about ranks and the root: without a secret of their own
// they run with SPCCL_AUTH=off (the secret's tests say what they set).
EnvMap withAuthDefault(EnvMap env) {
  if (!env.count("SPCCL_JOB_SECRET") && !env.count("SPCCL_JOB_SECRET_FILE") &&
      !env.count("SPCCL_AUTH"))
    env["SPCCL_AUTH"] = "off";
  return env;
}

LaunchEnv discover(const EnvMap& env) {
  LaunchEnv out;
  spcclResult_t result = discoverLaunchEnv(withAuthDefault(env), &out);
  EXPECT_EQ(result, spcclSuccess) << threadLastError();
  return out;
}

// The message of a discovery that must fail.
std::string failureOf(const EnvMap& env) {
  clearThreadLastError();
  LaunchEnv out;
  EXPECT_NE(discoverLaunchEnv(withAuthDefault(env), &out), spcclSuccess);
  return threadLastError();
}

const EnvMap kSpccl = {
    {"SPCCL_RANK", "2"},
    {"SPCCL_NRANKS", "4"},
    {"SPCCL_LOCAL_RANK", "1"},
    {"SPCCL_COMM_ID", "10.1.2.3:29500"},
    {"SPCCL_JOB_SECRET", "0x0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789abcdef"}};
const EnvMap kTorchrun = {{"RANK", "1"},
                          {"WORLD_SIZE", "8"},
                          {"LOCAL_RANK", "1"},
                          {"MASTER_ADDR", "node0"},
                          {"MASTER_PORT", "29400"},
                          {"TORCHELASTIC_RUN_ID", "run7"}};
const EnvMap kOpenMpi = {{"OMPI_COMM_WORLD_RANK", "3"},
                         {"OMPI_COMM_WORLD_SIZE", "6"},
                         {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                         {"OMPI_MCA_ess_base_jobid", "12345"}};
const EnvMap kPmi = {{"PMI_RANK", "5"}, {"PMI_SIZE", "7"}, {"MPI_LOCALRANKID", "2"}};
const EnvMap kSlurm = {{"SLURM_PROCID", "9"},
                       {"SLURM_NTASKS", "16"},
                       {"SLURM_LOCALID", "1"},
                       {"SLURM_JOB_ID", "4242"}};

EnvMap merged(EnvMap base, const EnvMap& more) {
  for (const auto& [name, value] : more) base[name] = value;
  return base;
}

EnvMap without(EnvMap env, const std::string& name) {
  env.erase(name);
  return env;
}

const EnvMap kCommId = {{"SPCCL_COMM_ID", "head:5000"}};

TEST(EnvDiscovery, ReadsSpcclrunVariables) {
  LaunchEnv env = discover(kSpccl);
  EXPECT_EQ(env.source, "spccl");
  EXPECT_EQ(env.rank, 2);
  EXPECT_EQ(env.nranks, 4);
  EXPECT_EQ(env.localRank, 1);
  EXPECT_EQ(env.rootHost, "10.1.2.3");
  EXPECT_EQ(env.rootPort, 29500);
  EXPECT_EQ(formatJobSecret(env.secret),
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  EXPECT_EQ(env.secretOrigin, "SPCCL_JOB_SECRET");
}

TEST(EnvDiscovery, ReadsTorchrunWithRootBesideTheTorchStore) {
  LaunchEnv env = discover(kTorchrun);
  EXPECT_EQ(env.source, "torchrun");
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.nranks, 8);
  EXPECT_EQ(env.localRank, 1);
  EXPECT_EQ(env.rootHost, "node0");
  EXPECT_EQ(env.rootPort, 29400 + kMasterPortOffset);
  EXPECT_TRUE(env.secret.empty());
}

TEST(EnvDiscovery, CommIdOverridesMasterAddr) {
  LaunchEnv env = discover(merged(kTorchrun, kCommId));
  EXPECT_EQ(env.source, "torchrun");
  EXPECT_EQ(env.rootHost, "head");
  EXPECT_EQ(env.rootPort, 5000);
}

TEST(EnvDiscovery, ReadsOpenMpi) {
  LaunchEnv env = discover(merged(kOpenMpi, kCommId));
  EXPECT_EQ(env.source, "openmpi");
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.nranks, 6);
  EXPECT_EQ(env.localRank, 0);
  EXPECT_EQ(env.rootHost, "head");
  EXPECT_EQ(env.rootPort, 5000);
}

TEST(EnvDiscovery, ReadsPmiAndPmix) {
  LaunchEnv env = discover(merged(kPmi, kCommId));
  EXPECT_EQ(env.source, "pmi");
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.nranks, 7);
  EXPECT_EQ(env.localRank, 2);

  EnvMap pmix = {{"PMIX_RANK", "4"}, {"PMI_SIZE", "7"}, {"PMIX_NAMESPACE", "ns1"}};
  env = discover(merged(pmix, kCommId));
  EXPECT_EQ(env.source, "pmi");
  EXPECT_EQ(env.rank, 4);
  EXPECT_EQ(env.localRank, -1) << "no local-rank variable: unknown";
}

TEST(EnvDiscovery, ReadsSlurm) {
  EnvMap masterAddr = {{"MASTER_ADDR", "fe80::1"}, {"MASTER_PORT", "6000"}};
  LaunchEnv env = discover(merged(kSlurm, masterAddr));
  EXPECT_EQ(env.source, "slurm");
  EXPECT_EQ(env.rank, 9);
  EXPECT_EQ(env.nranks, 16);
  EXPECT_EQ(env.localRank, 1);
  EXPECT_EQ(env.rootHost, "fe80::1");
  EXPECT_EQ(env.rootPort, 6000 + kMasterPortOffset);

  EnvMap oldSlurm = {{"SLURM_PROCID", "0"}, {"SLURM_NPROCS", "2"}};
  EXPECT_EQ(discover(merged(oldSlurm, kCommId)).nranks, 2);
}

// What srun gives every task of `srun -N 2 -n 4` in job 4242, step 2.
const EnvMap kSrunStep = merged(
    kSlurm,
    {{"SLURM_STEP_NODELIST", "spl-h[3-4]"}, {"SLURM_STEP_ID", "2"}, {"SLURMD_NODENAME", "spl-h4"}});

TEST(EnvDiscovery, SrunStepRootIsTheFirstNodeOnAPortFromJobAndStep) {
  LaunchEnv env = discover(kSrunStep);
  EXPECT_EQ(env.source, "slurm");
  EXPECT_EQ(env.rootHost, "spl-h3");
  EXPECT_EQ(env.rootPort, kSlurmPortBase + (4242 * 16 + 2) % 10000);
  // Other steps of the job, and the next job, rendezvous elsewhere.
  EXPECT_NE(discover(merged(kSrunStep, {{"SLURM_STEP_ID", "3"}})).rootPort, env.rootPort);
  EXPECT_NE(discover(merged(kSrunStep, {{"SLURM_JOB_ID", "4243"}})).rootPort, env.rootPort);
  for (const char* job : {"0", "4294967295", "99999999999"}) {
    int port = discover(merged(kSrunStep, {{"SLURM_JOB_ID", job}})).rootPort;
    EXPECT_GE(port, kSlurmPortBase) << job;
    EXPECT_LT(port, kSlurmPortBase + static_cast<int>(kSlurmPortSpan)) << job;
  }
  // The batch step's id (4294967294) and an unset one are not errors.
  discover(merged(kSrunStep, {{"SLURM_STEP_ID", "4294967294"}}));
  discover(without(kSrunStep, "SLURM_STEP_ID"));
}

TEST(EnvDiscovery, SrunStepReadsTheFirstHostOfAHostlist) {
  struct Case {
    const char* hostlist;
    const char* first;
  };
  for (Case c : {Case{"node07", "node07"}, Case{"n[01-04]", "n01"}, Case{"n[5,7-9]x", "n5x"},
                 Case{"rack[2-3]-n[05-06]", "rack2-n05"}, Case{"gpu1,cpu[1-9]", "gpu1"},
                 Case{"cpu[3-4],gpu1", "cpu3"}}) {
    EnvMap env = merged(kSrunStep, {{"SLURM_STEP_NODELIST", c.hostlist}});
    EXPECT_EQ(discover(env).rootHost, c.first) << c.hostlist;
  }
  for (const char* bad : {"n[01-04", "n]", "n[a-b]", "n[]", ",n1"}) {
    std::string message = failureOf(merged(kSrunStep, {{"SLURM_STEP_NODELIST", bad}}));
    std::string expected = std::string("SLURM_STEP_NODELIST=") + bad;
    EXPECT_NE(message.find(expected), std::string::npos) << expected << " -> " << message;
  }
}

TEST(EnvDiscovery, SrunStepTakesTheFirstReservedPort) {
  EXPECT_EQ(discover(merged(kSrunStep, {{"SLURM_STEP_RESV_PORTS", "12000-12003"}})).rootPort,
            12000);
  EXPECT_EQ(discover(merged(kSrunStep, {{"SLURM_STEP_RESV_PORTS", "12005,12010"}})).rootPort,
            12005);
  EXPECT_EQ(discover(merged(kSrunStep, {{"SLURM_STEP_RESV_PORTS", "12007"}})).rootPort, 12007);
  for (const char* bad : {"x-12000", "0-3", "70000"}) {
    std::string message = failureOf(merged(kSrunStep, {{"SLURM_STEP_RESV_PORTS", bad}}));
    std::string expected = std::string("SLURM_STEP_RESV_PORTS=") + bad;
    EXPECT_NE(message.find(expected), std::string::npos) << expected << " -> " << message;
  }
}

TEST(EnvDiscovery, SrunStepRootMustRunOnTheFirstNode) {
  EnvMap rank0 = merged(kSrunStep, {{"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"}});
  std::string message = failureOf(rank0);  // SLURMD_NODENAME=spl-h4, first node spl-h3
  EXPECT_NE(message.find("SLURMD_NODENAME=spl-h4"), std::string::npos) << message;
  EXPECT_NE(message.find("set SPCCL_COMM_ID"), std::string::npos) << message;
  EXPECT_EQ(discover(merged(rank0, {{"SLURMD_NODENAME", "spl-h3"}})).rootHost, "spl-h3");
  EXPECT_EQ(discover(without(rank0, "SLURMD_NODENAME")).rootHost, "spl-h3");
  EXPECT_EQ(discover(merged(rank0, kCommId)).rootHost, "head") << "SPCCL_COMM_ID still wins";
}

TEST(EnvDiscovery, SrunStepNeedsAJobIdToDeriveAPort) {
  std::string message = failureOf(without(kSrunStep, "SLURM_JOB_ID"));
  EXPECT_NE(message.find("SLURM_JOB_ID"), std::string::npos) << message;
  message = failureOf(merged(kSrunStep, {{"SLURM_JOB_ID", "12x"}}));
  EXPECT_NE(message.find("SLURM_JOB_ID=12x"), std::string::npos) << message;
  EXPECT_EQ(
      discover(merged(without(kSrunStep, "SLURM_JOB_ID"), {{"SLURM_STEP_RESV_PORTS", "12000"}}))
          .rootPort,
      12000);
}

TEST(EnvDiscovery, PriorityIsSpcclTorchrunOpenMpiPmiSlurm) {
  EnvMap env = merged(merged(merged(merged(kSpccl, kTorchrun), kOpenMpi), kPmi), kSlurm);
  EXPECT_EQ(discover(env).source, "spccl");
  for (const char* name : {"SPCCL_RANK", "SPCCL_NRANKS", "SPCCL_LOCAL_RANK"}) env.erase(name);
  EXPECT_EQ(discover(env).source, "torchrun");
  env.erase("RANK");
  EXPECT_EQ(discover(env).source, "openmpi");
  env.erase("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(discover(env).source, "pmi");
  env.erase("PMI_RANK");
  EXPECT_EQ(discover(env).source, "slurm");
  EXPECT_EQ(discover(env).rank, 9);
}

TEST(EnvDiscovery, HalfSetSpcclVariablesAreAnError) {
  // Even with a complete lower-priority source: SPCCL_RANK means "use spccl's".
  std::string message = failureOf(merged(without(kSpccl, "SPCCL_NRANKS"), kSlurm));
  EXPECT_NE(message.find("SPCCL_NRANKS"), std::string::npos) << message;
  EXPECT_NE(message.find("SPCCL_RANK=2"), std::string::npos) << message;
}

TEST(EnvDiscovery, HalfSetForeignVariablesFallThrough) {
  // srun --mpi=pmix sets PMIX_RANK without PMI_SIZE.
  EnvMap pmixUnderSlurm = merged(merged({{"PMIX_RANK", "9"}}, kSlurm), kCommId);
  EXPECT_EQ(discover(pmixUnderSlurm).source, "slurm");
  // Alone, the half-set source is reported.
  std::string message = failureOf({{"PMIX_RANK", "1"}});
  EXPECT_NE(message.find("PMI_SIZE"), std::string::npos) << message;
}

TEST(EnvDiscovery, NoLauncherNamesTheSpcclVariables) {
  std::string message = failureOf({{"HOME", "/root"}});
  EXPECT_NE(message.find("SPCCL_RANK"), std::string::npos) << message;
  EXPECT_NE(message.find("SPCCL_COMM_ID"), std::string::npos) << message;
}

TEST(EnvDiscovery, MissingRendezvousAsksForCommId) {
  for (const EnvMap* source : {&kOpenMpi, &kPmi, &kSlurm}) {
    std::string message = failureOf(*source);
    EXPECT_NE(message.find("set SPCCL_COMM_ID"), std::string::npos) << message;
  }
  std::string message = failureOf(merged(kSlurm, {{"MASTER_ADDR", "node0"}}));
  EXPECT_NE(message.find("MASTER_PORT"), std::string::npos) << message;
  message = failureOf(without(kTorchrun, "MASTER_ADDR"));
  EXPECT_NE(message.find("MASTER_ADDR"), std::string::npos) << message;
}

TEST(EnvDiscovery, InvalidRanksNameTheVariableAndValue) {
  struct Case {
    const char* name;
    const char* value;
  };
  for (Case bad :
       {Case{"SPCCL_RANK", "abc"}, Case{"SPCCL_RANK", "4"}, Case{"SPCCL_RANK", "-1"},
        Case{"SPCCL_RANK", "1x"}, Case{"SPCCL_NRANKS", "0"}, Case{"SPCCL_NRANKS", "99999999999"},
        Case{"SPCCL_LOCAL_RANK", "4"}, Case{"SPCCL_LOCAL_RANK", "one"}}) {
    EnvMap env = kSpccl;
    env[bad.name] = bad.value;
    std::string message = failureOf(env);
    std::string expected = std::string(bad.name) + "=" + bad.value;
    EXPECT_NE(message.find(expected), std::string::npos) << expected << " -> " << message;
  }
  std::string message = failureOf(merged(kTorchrun, {{"RANK", "8"}}));
  EXPECT_NE(message.find("RANK=8"), std::string::npos) << message;
  EXPECT_NE(message.find("WORLD_SIZE=8"), std::string::npos) << message;
}

TEST(EnvDiscovery, InvalidPortsNameTheVariableAndValue) {
  for (const char* commId : {"head:0", "head:65536", "head:http", "head", ":5000",
                             "head:", "::1:5000", "[::1]5000", "[::1"}) {
    std::string message = failureOf(merged(kSpccl, {{"SPCCL_COMM_ID", commId}}));
    std::string expected = std::string("SPCCL_COMM_ID=") + commId;
    EXPECT_NE(message.find(expected), std::string::npos) << expected << " -> " << message;
  }
  for (const char* port : {"0", "-5", "65535", "x"}) {
    std::string message = failureOf(merged(kTorchrun, {{"MASTER_PORT", port}}));
    std::string expected = std::string("MASTER_PORT=") + port;
    EXPECT_NE(message.find(expected), std::string::npos) << expected << " -> " << message;
  }
}

TEST(EnvDiscovery, AcceptsBracketedIpv6CommId) {
  LaunchEnv env = discover(merged(kSpccl, {{"SPCCL_COMM_ID", "[fd00::2]:65535"}}));
  EXPECT_EQ(env.rootHost, "fd00::2");
  EXPECT_EQ(env.rootPort, 65535);
  EXPECT_EQ(formatHostPort(env.rootHost, env.rootPort), "[fd00::2]:65535");
  EXPECT_EQ(formatHostPort("10.0.0.1", 1), "10.0.0.1:1");
}

TEST(EnvDiscovery, InvalidSecretNamesTheVariableNotTheValue) {
  // Too short (64 bits: the old format), odd, too long, not hex.
  for (const char* secret :
       {"deadbeef01234567", "0x", "12 34", "-1", "0123456789abcdef0123456789abcdef0",
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef00",
        "0123456789abcdef0123456789abcdeg"}) {
    std::string message = failureOf(merged(kSpccl, {{"SPCCL_JOB_SECRET", secret}}));
    EXPECT_NE(message.find("SPCCL_JOB_SECRET"), std::string::npos) << secret << " -> " << message;
    EXPECT_NE(message.find("128 to 256 bits"), std::string::npos) << message;
    if (std::string(secret).size() > 4) {
      EXPECT_EQ(message.find(secret), std::string::npos) << "the value is not echoed: " << message;
    }
  }
}

TEST(EnvDiscovery, SecretTextRoundTrips) {
  JobSecret secret;
  ASSERT_EQ(parseJobSecret("0X0123456789abcdef0123456789abcdef", "test", &secret), spcclSuccess);
  EXPECT_EQ(secret.size, 16u);
  EXPECT_EQ(formatJobSecret(secret), "0123456789abcdef0123456789abcdef");
  std::string full(64, 'f');
  ASSERT_EQ(parseJobSecret(full + "\n", "test", &secret), spcclSuccess);
  EXPECT_EQ(secret.size, 32u);
  EXPECT_EQ(formatJobSecret(secret), full);
  EXPECT_NE(parseJobSecret("g", "test", &secret), spcclSuccess);
}

// The secret is never derived from the launcher's variables (anyone on the
// cluster can read those): without one, discovery fails unless SPCCL_AUTH=off.
TEST(EnvDiscovery, NoSecretFailsUnlessAuthIsOff) {
  for (const EnvMap& launcher : {merged(kSlurm, kCommId), kTorchrun, merged(kOpenMpi, kCommId),
                                 without(kSpccl, "SPCCL_JOB_SECRET")}) {
    LaunchEnv out;
    clearThreadLastError();
    EXPECT_NE(discoverLaunchEnv(merged(launcher, {{"SPCCL_AUTH", "on"}}), &out), spcclSuccess);
    EXPECT_NE(threadLastError().find("SPCCL_JOB_SECRET_FILE"), std::string::npos)
        << threadLastError();
    LaunchEnv off = discover(merged(launcher, {{"SPCCL_AUTH", "off"}}));
    EXPECT_TRUE(off.secret.empty());
  }
}

TEST(EnvDiscovery, SecretFileMustBePrivate) {
  char dir[] = "/tmp/spccl_secret_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/secret";
  std::string hex(64, 'a');
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fprintf(f, "%s\n", hex.c_str());
  std::fclose(f);
  EnvMap env = merged(without(kSpccl, "SPCCL_JOB_SECRET"), {{"SPCCL_JOB_SECRET_FILE", path}});
  chmod(path.c_str(), 0644);
  std::string message = failureOf(env);
  EXPECT_NE(message.find("0644"), std::string::npos) << message;
  chmod(path.c_str(), 0600);
  LaunchEnv ok = discover(env);
  EXPECT_EQ(formatJobSecret(ok.secret), hex);
  EXPECT_EQ(ok.secretOrigin, "SPCCL_JOB_SECRET_FILE");
  // The file wins over the variable.
  EXPECT_EQ(
      formatJobSecret(discover(merged(env, {{"SPCCL_JOB_SECRET", std::string(64, 'b')}})).secret),
      hex);
  unlink(path.c_str());
  rmdir(dir);
  EXPECT_NE(failureOf(env).find(path), std::string::npos);
}

// Sets variables of the real environment for one test and restores them.
class ScopedEnv {
 public:
  explicit ScopedEnv(const EnvMap& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old)
        setenv(name.c_str(), old->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(EnvDiscovery, ReadsTheProcessEnvironment) {
  ScopedEnv env(kSpccl);
  LaunchEnv out;
  ASSERT_EQ(discoverLaunchEnv(&out), spcclSuccess) << threadLastError();
  EXPECT_EQ(out.source, "spccl");
  EXPECT_EQ(out.rank, 2);
  EXPECT_EQ(out.rootPort, 29500);
  EXPECT_EQ(out.secret.size, 32u);
}

}  // namespace
}  // namespace spccl
