#include "mpi_family.h"

#include <cstring>

namespace spccl::mpi {

bool runningFamilyMatches(char* running, int capacity) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (PMPI_Get_library_version(version, &length) != MPI_SUCCESS) version[0] = '\0';
  // First line only: Open MPI's string goes on with repository details.
  version[std::strcspn(version, "\n")] = '\0';
  std::strncpy(running, version, static_cast<size_t>(capacity) - 1);
  running[capacity - 1] = '\0';
#if defined(OPEN_MPI) || defined(MPICH_VERSION)
  return std::strstr(version, SPCCL_MPI_FAMILY) != nullptr;
#else
  return true;  // unknown family at build time: nothing to compare with
#endif
}

}  // namespace spccl::mpi
