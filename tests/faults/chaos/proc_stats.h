// What a process holds, read from /proc/self: open file descriptors, RSS,
// threads and mappings of /dev/shm files. The chaos and soak drivers print
// it before and after their cycles; a count that grows with the cycles is a
// leak.
#pragma once

#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace spccl::chaos {

struct ProcStats {
  long fds = 0;
  long rssKb = 0;
  long threads = 0;
  long shmMaps = 0;  // lines of /proc/self/maps naming a /dev/shm file
};

inline long countDirEntries(const char* path) {
  DIR* dir = opendir(path);
  if (dir == nullptr) return -1;
  long n = 0;
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n;
}

inline ProcStats readProcStats() {
  ProcStats s;
  s.fds = countDirEntries("/proc/self/fd") - 1;  // less the one opendir holds while it reads
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      std::sscanf(line, "VmRSS: %ld", &s.rssKb);
      std::sscanf(line, "Threads: %ld", &s.threads);
    }
    std::fclose(f);
  }
  if (FILE* f = std::fopen("/proc/self/maps", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, f))
      if (std::strstr(line, " /dev/shm/") != nullptr) ++s.shmMaps;
    std::fclose(f);
  }
  return s;
}

}  // namespace spccl::chaos
