// spcclrun with real processes: the variables each rank gets, and how the
// job ends when a rank fails, is killed, ignores SIGTERM, or runs too long.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/clock.h"
#include "core/env_discovery.h"

#ifndef SPCCLRUN_PATH
#error "SPCCLRUN_PATH must point at the spcclrun binary (tests/CMakeLists.txt)"
#endif

extern char** environ;

namespace spccl {
namespace {

// One spcclrun, in its own process group so that a test past its deadline
// can kill the launcher and every rank at once.
class LauncherRun {
 public:
  LauncherRun(const std::vector<std::string>& args, const EnvMap& extraEnv = {}) {
    // Built before fork: the child only calls async-signal-safe functions.
    std::vector<std::string> env;
    for (char** entry = environ; *entry != nullptr; ++entry)
      if (std::strncmp(*entry, "SPCCL_", 6) != 0) env.push_back(*entry);
    for (const auto& [name, value] : extraEnv) env.push_back(name + "=" + value);
    std::vector<std::string> argv = {SPCCLRUN_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> envp, argvp;
    for (std::string& entry : env) envp.push_back(entry.data());
    for (std::string& arg : argv) argvp.push_back(arg.data());
    envp.push_back(nullptr);
    argvp.push_back(nullptr);

    int outPipe[2], errPipe[2];
    if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe: " << std::strerror(errno);
      return;
    }
    startedMs_ = monotonicMs();
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      dup2(outPipe[1], STDOUT_FILENO);
      dup2(errPipe[1], STDERR_FILENO);
      execve(argvp[0], argvp.data(), envp.data());
      _exit(126);
    }
    close(outPipe[1]);
    close(errPipe[1]);
    outFd_ = outPipe[0];
    errFd_ = errPipe[0];
    if (pid_ < 0) ADD_FAILURE() << "fork: " << std::strerror(errno);
  }

  ~LauncherRun() {
    if (pid_ > 0 && !reaped_) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (outFd_ >= 0) close(outFd_);
    if (errFd_ >= 0) close(errFd_);
  }

  // Reads output until done() holds or both pipes close; false at the deadline.
  bool readUntil(const std::function<bool()>& done, int64_t timeoutMs) {
    Deadline deadline(timeoutMs);
    while (!done() && (outFd_ >= 0 || errFd_ >= 0)) {
      if (deadline.expired()) return false;
      pollfd fds[2] = {{outFd_, POLLIN, 0}, {errFd_, POLLIN, 0}};
      if (poll(fds, 2, static_cast<int>(std::min<int64_t>(deadline.remainingMs(), 100))) < 0 &&
          errno != EINTR)
        return false;
      drain(fds[0], &outFd_, &out);
      drain(fds[1], &errFd_, &err);
    }
    return true;
  }

  // Reads to the end and reaps spcclrun; false (and the job is killed) at the deadline.
  bool finish(int64_t timeoutMs) {
    Deadline deadline(timeoutMs);
    if (!readUntil([] { return false; }, timeoutMs)) return false;
    while (!deadline.expired()) {
      if (waitpid(pid_, &status_, WNOHANG) == pid_) {
        reaped_ = true;
        seconds_ = (monotonicMs() - startedMs_) / 1000.0;
        return true;
      }
      usleep(2000);
    }
    return false;
  }

  pid_t pid() const { return pid_; }
  // spcclrun's exit status, or -1 when it did not exit normally.
  int exitStatus() const { return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1; }
  double seconds() const { return seconds_; }

  std::string out, err;

 private:
  static void drain(const pollfd& fd, int* ownFd, std::string* into) {
    if (*ownFd < 0 || !(fd.revents & (POLLIN | POLLHUP | POLLERR))) return;
    char buffer[4096];
    ssize_t got = read(*ownFd, buffer, sizeof(buffer));
    if (got > 0) {
      into->append(buffer, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      close(*ownFd);
      *ownFd = -1;
    }
  }

  pid_t pid_ = -1;
  int outFd_ = -1, errFd_ = -1;
  int status_ = 0;
  bool reaped_ = false;
  int64_t startedMs_ = 0;
  double seconds_ = 0;
};

constexpr int64_t kFinishMs = 20000;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) result.push_back(line);
  return result;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> shell(const std::string& script, int nranks,
                               std::vector<std::string> options = {}) {
  options.insert(options.end(), {"-n", std::to_string(nranks), "--", "/bin/sh", "-c", script});
  return options;
}

TEST(Spcclrun, EveryRankRunsWithNranks) {
  LauncherRun run(shell("test \"$SPCCL_RANK\" -lt 3 && echo $SPCCL_NRANKS", 3));
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 0) << run.err;
  EXPECT_EQ(run.out, "3\n3\n3\n");
}

TEST(Spcclrun, RanksGetVariablesThatDiscoveryAccepts) {
  LauncherRun run(
      shell("echo $SPCCL_RANK $SPCCL_NRANKS $SPCCL_LOCAL_RANK $SPCCL_COMM_ID "
            "$SPCCL_JOB_SECRET_FILE $(cat $SPCCL_JOB_SECRET_FILE)",
            3));
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  ASSERT_EQ(run.exitStatus(), 0) << run.err;
  std::set<int> ranks;
  std::set<std::string> commIds, secrets, files;
  for (const std::string& line : lines(run.out)) {
    std::string file;
    std::istringstream fields(line);
    EnvMap env;
    fields >> env["SPCCL_RANK"] >> env["SPCCL_NRANKS"] >> env["SPCCL_LOCAL_RANK"] >>
        env["SPCCL_COMM_ID"] >> file >> env["SPCCL_JOB_SECRET"];
    files.insert(file);
    LaunchEnv launch;
    ASSERT_EQ(discoverLaunchEnv(env, &launch), spcclSuccess) << line;
    EXPECT_EQ(launch.source, "spccl");
    EXPECT_EQ(launch.nranks, 3);
    EXPECT_EQ(launch.localRank, launch.rank);
    EXPECT_EQ(launch.rootHost, "127.0.0.1");
    EXPECT_EQ(launch.secret.size, 32u) << "256 random bits";
    ranks.insert(launch.rank);
    commIds.insert(env["SPCCL_COMM_ID"]);
    secrets.insert(formatJobSecret(launch.secret));
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(commIds.size(), 1u) << "one rendezvous for the job";
  EXPECT_EQ(secrets.size(), 1u) << "one secret for the job";
  ASSERT_EQ(files.size(), 1u) << "one secret file for the job";
  EXPECT_NE(access(files.begin()->c_str(), F_OK), 0) << "the secret file outlived the job";
}

TEST(Spcclrun, EachJobDrawsItsOwnSecret) {
  std::set<std::string> secrets;
  for (int job = 0; job < 2; ++job) {
    LauncherRun run(shell("cat $SPCCL_JOB_SECRET_FILE; stat -c %a $SPCCL_JOB_SECRET_FILE", 1));
    ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
    EXPECT_EQ(run.out.size(), 64u + 1 + 4) << run.out;
    EXPECT_EQ(run.out.substr(65), "600\n") << "the secret file is private";
    secrets.insert(run.out);
  }
  EXPECT_EQ(secrets.size(), 2u);
}

TEST(Spcclrun, KeepsTheUsersCommIdAndSecret) {
  const std::string secret(32, 'c');
  LauncherRun run(shell("echo $SPCCL_COMM_ID $SPCCL_JOB_SECRET $SPCCL_JOB_SECRET_FILE", 2),
                  {{"SPCCL_COMM_ID", "[::1]:4567"}, {"SPCCL_JOB_SECRET", secret}});
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 0) << run.err;
  EXPECT_EQ(run.out, "[::1]:4567 " + secret + "\n[::1]:4567 " + secret + "\n");
}

TEST(Spcclrun, RejectsAnInvalidCommIdBeforeStartingRanks) {
  LauncherRun run(shell("echo started", 2), {{"SPCCL_COMM_ID", "nohostport"}});
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("SPCCL_COMM_ID=nohostport"), std::string::npos) << run.err;
}

TEST(Spcclrun, FailingRankEndsTheJobWithItsStatus) {
  LauncherRun run(shell("if [ $SPCCL_RANK = 1 ]; then exit 3; fi; exec sleep 60", 3));
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 3) << run.err;
  EXPECT_NE(run.err.find("spcclrun: rank 1 (pid "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(") exited with status 3\n"), std::string::npos) << run.err;
  EXPECT_EQ(count(run.err, "spcclrun:"), 1u) << "only the first failure is reported: " << run.err;
  EXPECT_LT(run.seconds(), 10.0) << "the sleeping ranks were not ended promptly";
}

TEST(Spcclrun, RankKilledBySignalGives128PlusSignal) {
  LauncherRun run(shell("if [ $SPCCL_RANK = 0 ]; then kill -USR1 $$; fi; exec sleep 60", 2));
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 128 + SIGUSR1) << run.err;
  EXPECT_NE(run.err.find("spcclrun: rank 0 (pid "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("was killed by signal SIGUSR1"), std::string::npos) << run.err;
  EXPECT_LT(run.seconds(), 10.0);
}

TEST(Spcclrun, RankIgnoringSigtermIsKilledAfterTheGracePeriod) {
  // sleep inherits the ignored SIGTERM across exec; only SIGKILL ends it.
  // Rank 0 fails only once rank 1 ignores SIGTERM (the marker file).
  std::string marker = testing::TempDir() + "spcclrun_ignoring_" + std::to_string(getpid());
  unlink(marker.c_str());
  LauncherRun run(shell("if [ $SPCCL_RANK = 0 ]; then while [ ! -e " + marker +
                            " ]; do sleep 0.01; done; exit 5; fi; "
                            "trap '' TERM; touch " +
                            marker + "; exec sleep 60",
                        2));
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 5) << run.err;
  EXPECT_GE(run.seconds(), 1.5) << "SIGKILL came before the grace period";
  EXPECT_LT(run.seconds(), 10.0);
  unlink(marker.c_str());
}

TEST(Spcclrun, TimeoutEndsTheJobWith124AndNamesTheRunningRanks) {
  LauncherRun run(
      shell("if [ $SPCCL_RANK = 1 ]; then exit 0; fi; exec sleep 60", 3, {"--timeout", "1"}));
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 124) << run.err;
  EXPECT_NE(run.err.find("ranks still running: 0 2\n"), std::string::npos) << run.err;
  EXPECT_GE(run.seconds(), 0.9);
  EXPECT_LT(run.seconds(), 10.0);
}

TEST(Spcclrun, ForwardsSigtermToTheRanks) {
  // The trap runs between two short sleeps; the ranks answer and exit 7.
  LauncherRun run(
      shell("trap 'echo term-$SPCCL_RANK; exit 7' TERM; echo ready; "
            "while :; do sleep 0.05; done",
            2));
  ASSERT_TRUE(run.readUntil([&] { return count(run.out, "ready") == 2; }, kFinishMs)) << run.err;
  kill(run.pid(), SIGTERM);  // spcclrun alone, as a batch system would
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 7) << run.err;
  EXPECT_EQ(count(run.out, "term-0"), 1u) << run.out;
  EXPECT_EQ(count(run.out, "term-1"), 1u) << run.out;
}

TEST(Spcclrun, ProgramThatCannotRunGives127) {
  LauncherRun run({"-n", "2", "/nonexistent/program"});
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 127) << run.err;
  EXPECT_NE(run.err.find("cannot run /nonexistent/program"), std::string::npos) << run.err;
}

TEST(Spcclrun, UsageErrorsExitWith2) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"true"},
                                             {"-n", "0", "true"},
                                             {"-n", "x", "true"},
                                             {"-n", "2"},
                                             {"--np=2", "--timeout", "-1", "true"},
                                             {"--bogus", "-n", "1", "true"}}) {
    LauncherRun run(args);
    ASSERT_TRUE(run.finish(kFinishMs));
    EXPECT_EQ(run.exitStatus(), 2) << args.front() << ": " << run.err;
    EXPECT_NE(run.err.find("spcclrun: "), std::string::npos) << run.err;
  }
  LauncherRun help({"--help"});
  ASSERT_TRUE(help.finish(kFinishMs));
  EXPECT_EQ(help.exitStatus(), 0);
  EXPECT_NE(help.out.find("usage: spcclrun -n N"), std::string::npos) << help.out;
}

TEST(Spcclrun, LongOptionSpellingsWork) {
  LauncherRun run({"--np=2", "--timeout=30", "/bin/sh", "-c", "echo $SPCCL_NRANKS"});
  ASSERT_TRUE(run.finish(kFinishMs)) << run.err;
  EXPECT_EQ(run.exitStatus(), 0) << run.err;
  EXPECT_EQ(run.out, "2\n2\n");
}

}  // namespace
}  // namespace spccl
