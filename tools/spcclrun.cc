// spcclrun -n N [--timeout S] [--keep-going] [--] PROGRAM ARGS...
//
// Starts N ranks of PROGRAM on this host with the launch variables that
// spcclCommInitFromEnv reads (SPCCL_RANK, SPCCL_NRANKS, SPCCL_LOCAL_RANK,
// SPCCL_COMM_ID, SPCCL_JOB_SECRET), and ends the job as one: the first rank
// that fails takes the others down, so peers of a crashed rank do not sit
// in their collectives until SPCCL_TIMEOUT_MS runs out. With --keep-going
// a rank's death stops nobody: the survivors may revoke, agree and shrink
// (docs/fault-tolerance.md), and the job's status is theirs.
//
// The ranks stay in spcclrun's process group, so a ^C at the terminal
// reaches all of them directly; signals sent to spcclrun alone (kill, a
// batch system) are forwarded. A second such signal kills the ranks.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/clock.h"
#include "core/env_discovery.h"
#include "core/handshake.h"

namespace {

constexpr int kUsageExit = 2;
constexpr int kTimeoutExit = 124;       // as timeout(1)
constexpr int kCannotExecExit = 127;    // as the shell
constexpr int64_t kKillGraceMs = 2000;  // SIGTERM, then this long, then SIGKILL

struct Options {
  int nranks = 0;
  double timeoutSeconds = 0;   // 0: none
  bool keepGoing = false;      // a rank's end does not end the job
  std::vector<char*> program;  // argv of each rank, nullptr-terminated
};

void printUsage(FILE* to) {
  std::fprintf(to,
               "usage: spcclrun -n N [--timeout SECONDS] [--keep-going] [--] PROGRAM [ARGS...]\n"
               "  -n, --np N           number of ranks to start on this host\n"
               "  --timeout SECONDS    end the job after this long (exit status 124)\n"
               "  --keep-going         a rank that dies or fails does not stop the others; the\n"
               "                       status is the survivors' (0 when every rank that was not\n"
               "                       killed by a signal exited 0), and the dead are listed\n"
               "  -h, --help           this text\n"
               "Each rank gets SPCCL_RANK, SPCCL_NRANKS, SPCCL_LOCAL_RANK, SPCCL_COMM_ID\n"
               "(127.0.0.1 and a free port, unless already set) and SPCCL_JOB_SECRET_FILE: a\n"
               "random 256-bit secret in a 0600 file of a private temporary directory, removed\n"
               "when the job ends (unless SPCCL_JOB_SECRET or SPCCL_JOB_SECRET_FILE is set).\n"
               "Without --keep-going, the first rank to fail ends the job with its status\n"
               "(128+signal for a signal).\n");
}

std::optional<int> parsePositiveInt(const char* text) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || value < 1 || value > 1 << 20)
    return std::nullopt;
  return static_cast<int>(value);
}

std::optional<double> parsePositiveSeconds(const char* text) {
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value > 0)) return std::nullopt;
  return value;
}

// Returns an exit status when spcclrun should stop right away (help, usage error).
std::optional<int> parseOptions(int argc, char** argv, Options* options) {
  int i = 1;
  auto valueOf = [&](const std::string& flag, const char* arg) -> const char* {
    size_t eq = std::string(arg).find('=');
    if (eq != std::string::npos && std::string(arg).substr(0, eq) == flag) return arg + eq + 1;
    return i + 1 < argc ? argv[++i] : nullptr;
  };
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    std::string flag = arg.substr(0, arg.find('='));
    if (arg == "-h" || arg == "--help") {
      printUsage(stdout);
      return 0;
    }
    if (arg == "--") {
      ++i;
      break;
    }
    if (flag == "-n" || flag == "--np") {
      const char* value = valueOf(flag, argv[i]);
      std::optional<int> n = value ? parsePositiveInt(value) : std::nullopt;
      if (!n) {
        std::fprintf(stderr, "spcclrun: %s needs a positive number of ranks, got '%s'\n",
                     flag.c_str(), value ? value : "");
        return kUsageExit;
      }
      options->nranks = *n;
    } else if (flag == "--timeout") {
      const char* value = valueOf(flag, argv[i]);
      std::optional<double> seconds = value ? parsePositiveSeconds(value) : std::nullopt;
      if (!seconds) {
        std::fprintf(stderr, "spcclrun: --timeout needs a positive number of seconds, got '%s'\n",
                     value ? value : "");
        return kUsageExit;
      }
      options->timeoutSeconds = *seconds;
    } else if (arg == "--keep-going") {
      options->keepGoing = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "spcclrun: unknown option '%s'\n", arg.c_str());
      printUsage(stderr);
      return kUsageExit;
    } else {
      break;  // the program
    }
  }
  if (options->nranks == 0 || i >= argc) {
    std::fprintf(stderr, "spcclrun: %s\n",
                 options->nranks == 0 ? "-n N is required" : "no program to run");
    printUsage(stderr);
    return kUsageExit;
  }
  options->program.assign(argv + i, argv + argc);
  options->program.push_back(nullptr);
  return std::nullopt;
}

// The port is free when we look; rank 0 binds it moments later. Another
// process could take it in between — rare on 127.0.0.1, and rank 0 then
// fails loudly rather than joining someone else's job (the secret).
std::optional<int> pickFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  std::optional<int> port;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

// The drawn secret's file and its private directory, removed at exit.
struct SecretFile {
  std::string dir, path;
  ~SecretFile() {
    if (!path.empty()) ::unlink(path.c_str());
    if (!dir.empty()) ::rmdir(dir.c_str());
  }
};
SecretFile gSecretFile;

// 256 random bits (getrandom) into a 0600 file in a 0700 directory of its
// own; only the file's name travels in the ranks' environment.
std::optional<std::string> drawSecretFile() {
  spccl::JobSecret secret;
  secret.size = spccl::kSecretMaxBytes;
  if (spccl::randomBytes(secret.bytes.data(), secret.size) != spcclSuccess) {
    std::fprintf(stderr, "spcclrun: %s\n", spccl::threadLastError().c_str());
    return std::nullopt;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/spcclrun.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "spcclrun: cannot create a private directory %s: %s\n", pattern.c_str(),
                 std::strerror(errno));
    return std::nullopt;
  }
  gSecretFile.dir = pattern;
  std::string path = pattern + "/job-secret";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::fprintf(stderr, "spcclrun: cannot create %s: %s\n", path.c_str(), std::strerror(errno));
    return std::nullopt;
  }
  gSecretFile.path = path;
  std::string text = spccl::formatJobSecret(secret) + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) {
    std::fprintf(stderr, "spcclrun: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return std::nullopt;
  }
  return path;
}

// The job-wide variables: the user's SPCCL_COMM_ID / SPCCL_JOB_SECRET win
// (e.g. to pin the port), after a check so a typo fails here, not in N ranks.
std::optional<std::map<std::string, std::string>> jobVariables() {
  std::map<std::string, std::string> vars;
  if (const char* commId = std::getenv(spccl::kEnvCommId); commId && *commId) {
    std::string host;
    int port = 0;
    if (spccl::splitHostPort(spccl::kEnvCommId, commId, &host, &port) != spcclSuccess)
      return std::nullopt;
  } else {
    std::optional<int> port = pickFreePort();
    if (!port) {
      std::fprintf(stderr, "spcclrun: cannot find a free port on 127.0.0.1: %s\n",
                   std::strerror(errno));
      return std::nullopt;
    }
    vars[spccl::kEnvCommId] = spccl::formatHostPort("127.0.0.1", *port);
  }
  const char* secretFile = std::getenv(spccl::kEnvJobSecretFile);
  const char* secret = std::getenv(spccl::kEnvJobSecret);
  spccl::JobSecret parsed;
  if (secretFile && *secretFile) {
    if (spccl::readJobSecretFile(secretFile, &parsed) != spcclSuccess) {
      std::fprintf(stderr, "spcclrun: %s\n", spccl::threadLastError().c_str());
      return std::nullopt;
    }
  } else if (secret && *secret) {
    if (spccl::parseJobSecret(secret, spccl::kEnvJobSecret, &parsed) != spcclSuccess) {
      std::fprintf(stderr, "spcclrun: %s\n", spccl::threadLastError().c_str());
      return std::nullopt;
    }
  } else {
    std::optional<std::string> path = drawSecretFile();
    if (!path) return std::nullopt;
    vars[spccl::kEnvJobSecretFile] = *path;
  }
  return vars;
}

// This process's environment with `overrides` replacing or adding entries.
std::vector<std::string> environmentWith(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text = *entry;
    if (!overrides.count(text.substr(0, text.find('=')))) env.push_back(text);
  }
  for (const auto& [name, value] : overrides)
    env.push_back(std::string(name).append("=").append(value));
  return env;
}

std::string signalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

class Job {
 public:
  Job(const Options& options, sigset_t childMask) : options_(options), childMask_(childMask) {}

  // A failed fork ends the job like a failed rank.
  void start(const std::map<std::string, std::string>& jobVars) {
    for (int rank = 0; rank < options_.nranks; ++rank) {
      std::map<std::string, std::string> vars = jobVars;
      vars[spccl::kEnvRank] = std::to_string(rank);
      vars[spccl::kEnvNranks] = std::to_string(options_.nranks);
      vars[spccl::kEnvLocalRank] = std::to_string(rank);  // all ranks are on this host
      std::vector<std::string> env = environmentWith(vars);
      std::vector<char*> envp;
      envp.reserve(env.size() + 1);
      for (std::string& entry : env) envp.push_back(entry.data());
      envp.push_back(nullptr);
      pid_t pid = fork();
      if (pid < 0) {
        std::fprintf(stderr, "spcclrun: fork for rank %d failed: %s\n", rank, std::strerror(errno));
        endWith(1);
        return;
      }
      if (pid == 0) execRank(envp);
      running_[pid] = rank;
    }
  }

  // Supervises until every rank has exited; returns spcclrun's exit status.
  int wait(const sigset_t& watched) {
    int64_t timeoutAtMs = options_.timeoutSeconds > 0
                              ? spccl::monotonicMs() + int64_t(options_.timeoutSeconds * 1000)
                              : 0;
    while (true) {
      reapExited();
      if (running_.empty()) break;
      int64_t now = spccl::monotonicMs();
      if (timeoutAtMs && now >= timeoutAtMs && !exitStatus_) onTimeout();
      if (killAtMs_ && now >= killAtMs_) signalAll(SIGKILL);
      // Wake at the next deadline, and at least every second as a backstop.
      int64_t wakeAtMs = now + 1000;
      if (timeoutAtMs && !exitStatus_) wakeAtMs = std::min(wakeAtMs, timeoutAtMs);
      if (killAtMs_) wakeAtMs = std::min(wakeAtMs, std::max(killAtMs_, now + 10));
      int64_t waitMs = std::max<int64_t>(wakeAtMs - now, 1);
      timespec wait{static_cast<time_t>(waitMs / 1000), static_cast<long>(waitMs % 1000) * 1000000};
      siginfo_t info{};
      int sig = sigtimedwait(&watched, &info, &wait);
      if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) onSignal(sig, info);
      // SIGCHLD, a timeout or EINTR: the loop head reaps and checks deadlines.
    }
    if (options_.keepGoing && !exitStatus_) return keepGoingStatus();
    return exitStatus_.value_or(0);
  }

 private:
  [[noreturn]] void execRank(std::vector<char*>& envp) {
    sigprocmask(SIG_SETMASK, &childMask_, nullptr);  // exec keeps the mask; give back the user's
    execvpe(options_.program[0], options_.program.data(), envp.data());
    std::fprintf(stderr, "spcclrun: cannot run %s: %s\n", options_.program[0],
                 std::strerror(errno));
    _exit(kCannotExecExit);
  }

  void reapExited() {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      auto it = running_.find(pid);
      if (it == running_.end()) continue;
      int rank = it->second;
      running_.erase(it);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      // After the job has a status, further exits are its consequences.
      if (exitStatus_) continue;
      if (options_.keepGoing) {
        recordKeepGoing(rank, pid, status);
        continue;
      }
      if (WIFEXITED(status)) {
        std::fprintf(stderr, "spcclrun: rank %d (pid %d) exited with status %d\n", rank, pid,
                     WEXITSTATUS(status));
        endWith(WEXITSTATUS(status));
      } else {
        std::fprintf(stderr, "spcclrun: rank %d (pid %d) was killed by signal %s\n", rank, pid,
                     signalName(WTERMSIG(status)).c_str());
        endWith(128 + WTERMSIG(status));
      }
    }
  }

  // --keep-going: a rank killed by a signal died; one that exited is a
  // survivor, whatever its status.
  void recordKeepGoing(int rank, pid_t pid, int status) {
    if (WIFEXITED(status)) {
      std::fprintf(stderr, "spcclrun: rank %d (pid %d) exited with status %d (--keep-going)\n",
                   rank, pid, WEXITSTATUS(status));
      if (!firstFailedSurvivor_) firstFailedSurvivor_ = WEXITSTATUS(status);
      return;
    }
    std::string how = "killed by signal " + signalName(WTERMSIG(status));
    std::fprintf(stderr, "spcclrun: rank %d (pid %d) died: %s; the others go on (--keep-going)\n",
                 rank, pid, how.c_str());
    died_[rank] = how;
    if (!firstDeath_) firstDeath_ = 128 + WTERMSIG(status);
  }

  int keepGoingStatus() const {
    if (died_.empty()) return firstFailedSurvivor_.value_or(0);
    std::string list;
    for (const auto& [rank, how] : died_)
      list += (list.empty() ? "" : ", ") + std::string("rank ") + std::to_string(rank) + " (" +
              how + ")";
    const int survivors = options_.nranks - static_cast<int>(died_.size());
    // No survivor: the job failed as a whole, with the first death's status.
    int status = survivors > 0 ? firstFailedSurvivor_.value_or(0) : firstDeath_.value_or(1);
    std::fprintf(stderr, "spcclrun: %zu of %d ranks died: %s; %d survived; exit status %d\n",
                 died_.size(), options_.nranks, list.c_str(), survivors, status);
    return status;
  }

  void onTimeout() {
    std::string ranks;
    std::vector<int> sorted;
    for (const auto& [pid, rank] : running_) sorted.push_back(rank);
    std::sort(sorted.begin(), sorted.end());
    for (int rank : sorted) ranks += " " + std::to_string(rank);
    std::fprintf(stderr, "spcclrun: timed out after %g s; ranks still running:%s\n",
                 options_.timeoutSeconds, ranks.c_str());
    endWith(kTimeoutExit);
  }

  void onSignal(int sig, const siginfo_t& info) {
    ++signalsReceived_;
    if (signalsReceived_ > 1) {
      std::fprintf(stderr, "spcclrun: %s again; killing the ranks\n", signalName(sig).c_str());
      signalAll(SIGKILL);
      return;
    }
    // A terminal's ^C (SI_KERNEL) already reached the whole process group.
    if (info.si_code != SI_KERNEL) signalAll(sig);
  }

  void endWith(int status) {
    exitStatus_ = status;
    signalAll(SIGTERM);
    killAtMs_ = spccl::monotonicMs() + kKillGraceMs;
  }

  void signalAll(int sig) {
    for (const auto& [pid, rank] : running_) kill(pid, sig);
  }

  const Options& options_;
  sigset_t childMask_;
  std::map<pid_t, int> running_;   // pid → rank
  std::optional<int> exitStatus_;  // set by the first failure or the timeout
  int64_t killAtMs_ = 0;           // when SIGKILL follows the SIGTERM; 0: not yet
  int signalsReceived_ = 0;
  std::map<int, std::string> died_;         // --keep-going: rank → how it died
  std::optional<int> firstFailedSurvivor_;  // --keep-going: the first non-zero exit
  std::optional<int> firstDeath_;           // --keep-going: 128 + the first death's signal
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (std::optional<int> status = parseOptions(argc, argv, &options)) return *status;
  std::optional<std::map<std::string, std::string>> jobVars = jobVariables();
  if (!jobVars) return kUsageExit;

  // Signals are taken synchronously with sigtimedwait, so they stay blocked
  // here; the ranks get the original mask back before exec.
  std::signal(SIGCHLD, SIG_DFL);  // SIG_IGN inherited from a parent would reap for us
  sigset_t watched, original;
  sigemptyset(&watched);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&watched, sig);
  sigprocmask(SIG_BLOCK, &watched, &original);

  Job job(options, original);
  job.start(*jobVars);
  return job.wait(watched);
}
