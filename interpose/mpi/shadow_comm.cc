#include "shadow_comm.h"

#include <mutex>
#include <set>
#include <vector>

#include "base/log.h"

namespace spccl::mpi {

namespace {

std::mutex gMutex;  // guards gLive (MPI_THREAD_MULTIPLE: threads on different comms)
std::set<ShadowComm*> gLive;
int gKeyval = MPI_KEYVAL_INVALID;

// MPI's delete callback: runs inside MPI_Comm_free / MPI_Comm_delete_attr
// on every rank, so the spccl communicator goes away on all of them.
int deleteShadow(MPI_Comm, int, void* value, void*) {
  auto* shadow = static_cast<ShadowComm*>(value);
  {
    std::lock_guard<std::mutex> lock(gMutex);
    gLive.erase(shadow);
  }
  if (shadow->comm != nullptr) spcclCommDestroy(shadow->comm);
  delete shadow;
  return MPI_SUCCESS;
}

// Rank 0 makes the unique id, PMPI_Bcast carries it, every rank joins, and
// the ranks agree (PMPI_Allreduce MIN) whether all succeeded, so that a
// failure anywhere sends the communicator's calls back to MPI on every rank.
int createShadow(MPI_Comm comm, ShadowComm* shadow) {
  int rank = 0, size = 1, rc = MPI_SUCCESS;
  if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS) return rc;
  if ((rc = PMPI_Comm_size(comm, &size)) != MPI_SUCCESS) return rc;
  struct {
    int ok;
    spcclUniqueId id;
  } root = {1, {}};
  if (rank == 0 && spcclGetUniqueId(&root.id) != spcclSuccess) root.ok = 0;
  if ((rc = PMPI_Bcast(&root, sizeof(root), MPI_BYTE, 0, comm)) != MPI_SUCCESS) return rc;
  spcclResult_t result = spcclInternalError;
  if (root.ok) result = spcclCommInitRank(&shadow->comm, size, root.id, rank);
  int mine = result == spcclSuccess ? 1 : 0, all = 0;
  if ((rc = PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm)) != MPI_SUCCESS) return rc;
  if (!all) {
    SPCCL_WARN(
        "MPI interposer: no spccl communicator for an MPI communicator of %d ranks "
        "(rank %d: %s); its all-reduces stay on MPI",
        size, rank,
        mine ? "this rank succeeded, another failed"
             : (root.ok ? spcclGetLastError(nullptr) : "rank 0 could not make a unique id"));
    if (shadow->comm != nullptr) spcclCommDestroy(shadow->comm);
    shadow->comm = nullptr;
  }
  return MPI_SUCCESS;
}

}  // namespace

int setupShadowKeyval() {
  if (gKeyval != MPI_KEYVAL_INVALID) return MPI_SUCCESS;
  // No copy: MPI_Comm_dup gives the new communicator its own shadow.
  return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteShadow, &gKeyval, nullptr);
}

int shadowOf(MPI_Comm comm, ShadowComm** shadow) {
  int found = 0, rc;
  if ((rc = PMPI_Comm_get_attr(comm, gKeyval, shadow, &found)) != MPI_SUCCESS) return rc;
  if (found) return MPI_SUCCESS;
  auto* created = new ShadowComm{comm, nullptr};
  if ((rc = createShadow(comm, created)) != MPI_SUCCESS ||
      (rc = PMPI_Comm_set_attr(comm, gKeyval, created)) != MPI_SUCCESS) {
    if (created->comm != nullptr) spcclCommDestroy(created->comm);
    delete created;
    return rc;
  }
  {
    std::lock_guard<std::mutex> lock(gMutex);
    gLive.insert(created);
  }
  *shadow = created;
  return MPI_SUCCESS;
}

int dropShadow(MPI_Comm comm) {
  if (gKeyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return MPI_SUCCESS;
  void* value = nullptr;
  int found = 0;
  int rc = PMPI_Comm_get_attr(comm, gKeyval, &value, &found);
  if (rc != MPI_SUCCESS || !found) return rc;
  return PMPI_Comm_delete_attr(comm, gKeyval);
}

void dropAllShadows() {
  if (gKeyval == MPI_KEYVAL_INVALID) return;
  std::vector<MPI_Comm> comms;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    for (ShadowComm* shadow : gLive) comms.push_back(shadow->mpiComm);
  }
  // Deleting the attribute runs deleteShadow, which unregisters it.
  for (MPI_Comm comm : comms) {
    if (PMPI_Comm_delete_attr(comm, gKeyval) != MPI_SUCCESS)
      SPCCL_WARN("MPI interposer: could not drop a cached spccl communicator at MPI_Finalize");
  }
  PMPI_Comm_free_keyval(&gKeyval);
  gKeyval = MPI_KEYVAL_INVALID;
}

}  // namespace spccl::mpi
