// Faults a chaos rank injects into itself (--fault SPEC), so that a plain
// launcher (spcclrun --keep-going, netlab) can place a SIGKILL or SIGSTOP
// at a chosen phase of a chosen rank without racing the program from
// outside:
//
//   kill:R:init       rank R dies at a random point of its communicator's creation
//   kill:R:mid:S      rank R dies at a random point inside step S's collective
//   kill:R:agree      rank R dies at a random point inside its first agreement
//   kill:R:shrink     rank R dies at a random point inside its first shrink
//   kill:R:abort:S    rank R calls spcclCommAbort at step S and dies inside it
//   leave:R:S         rank R calls spcclCommAbort at step S and exits 0
//   stop:R:S:MS       rank R stops itself (SIGSTOP) before step S for MS ms
//
// R is the rank in the job the process started in (SPCCL_RANK); "random"
// draws a delay from the rank's seeded generator within the phase's
// expected length, and the drawn delay is printed.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace spccl::chaos {

enum class Phase { Init, Mid, Agree, Shrink, Abort, Leave, Stop };

struct FaultSpec {
  Phase phase;
  int rank = -1;
  long step = -1;
  long stopMs = 0;
};

// Parses one --fault SPEC; returns false with a message naming the spec.
inline bool parseFault(const std::string& spec, FaultSpec* out, std::string* why) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t colon; (colon = spec.find(':', begin)) != std::string::npos; begin = colon + 1)
    parts.push_back(spec.substr(begin, colon - begin));
  parts.push_back(spec.substr(begin));
  auto number = [&](size_t i, long* v) {
    if (i >= parts.size() || parts[i].empty()) return false;
    char* end = nullptr;
    *v = std::strtol(parts[i].c_str(), &end, 10);
    return *end == '\0' && *v >= 0;
  };
  long rank = -1, step = -1, ms = 0;
  const std::string& verb = parts[0];
  const std::string phase = parts.size() > 2 ? parts[2] : "";
  bool ok = number(1, &rank);
  if (ok && verb == "kill" && phase == "init" && parts.size() == 3) {
    *out = {Phase::Init, static_cast<int>(rank)};
  } else if (ok && verb == "kill" && phase == "agree" && parts.size() == 3) {
    *out = {Phase::Agree, static_cast<int>(rank)};
  } else if (ok && verb == "kill" && phase == "shrink" && parts.size() == 3) {
    *out = {Phase::Shrink, static_cast<int>(rank)};
  } else if (ok && verb == "kill" && (phase == "mid" || phase == "abort") && parts.size() == 4 &&
             number(3, &step)) {
    *out = {phase == "mid" ? Phase::Mid : Phase::Abort, static_cast<int>(rank), step};
  } else if (ok && verb == "leave" && parts.size() == 3 && number(2, &step)) {
    *out = {Phase::Leave, static_cast<int>(rank), step};
  } else if (ok && verb == "stop" && parts.size() == 4 && number(2, &step) && number(3, &ms)) {
    *out = {Phase::Stop, static_cast<int>(rank), step, ms};
  } else {
    *why = "--fault '" + spec +
           "': expected kill:R:init, kill:R:mid:S, kill:R:agree, kill:R:shrink, "
           "kill:R:abort:S, leave:R:S or stop:R:S:MS";
    return false;
  }
  return true;
}

// SIGKILLs this process `delayUs` microseconds from now, from a detached
// thread, whatever the calling thread is doing by then.
inline void killSelfAfter(long delayUs, const char* where) {
  const double killAtMs =
      std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch())
          .count() +
      delayUs / 1000.0;
  std::printf("chaos: armed t=%.3f in=%s delay_us=%ld\n", killAtMs, where, delayUs);
  std::fflush(stdout);
  std::thread([delayUs] {
    std::this_thread::sleep_for(std::chrono::microseconds(delayUs));
    kill(getpid(), SIGKILL);
  }).detach();
}

// Stops this process for `ms` milliseconds: a child resumes it, then exits.
inline void stopSelfFor(long ms) {
  const pid_t parent = getpid();
  std::printf(
      "chaos: stopping t=%.3f ms=%ld\n",
      std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch())
          .count(),
      ms);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    kill(parent, SIGCONT);
    _exit(0);
  }
  if (child < 0) {
    std::perror("chaos: fork for stop");
    return;
  }
  kill(parent, SIGSTOP);
  waitpid(child, nullptr, 0);  // resumed: the child has sent SIGCONT and is exiting
}

}  // namespace spccl::chaos
