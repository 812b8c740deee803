// Fault-tolerant agreement (spcclCommAgree): the ranks that are alive agree
// on the AND of their flags and on the set of failed ranks, over the fault
// channel (core/fault_channel.h), so it works on a broken or revoked
// communicator.
//
// The protocol is Paxos with a fixed order of coordinators and a
// unanimous quorum of the ranks the coordinator believes alive
// (docs/fault-tolerance.md, "Agreement"):
//   1. Coordinator c (the lowest rank not known failed) queries every rank
//      it believes alive; a query makes the rank promise to ignore lower
//      coordinators. A rank that refuses the connection or does not answer
//      within the timeout is failed. A value already decided or accepted
//      elsewhere is adopted (the highest coordinator's); else the value is
//      the AND of the flags and the union of the failed sets.
//   2. c asks every such rank to accept the value; one that promised a
//      higher coordinator refuses, and c stops coordinating.
//   3. c decides and tells every rank. The others follow c, querying it;
//      when c fails they follow the next rank.
#pragma once

#include <vector>

#include "core/fault_service.h"
#include "spccl.h"

namespace spccl {

struct AgreementResult {
  int flag = 0;
  std::vector<int> failedRanks;  // increasing
};

// `rank` of the communicator, its timeout from the service.
spcclResult_t runAgreement(FaultService& service, int flag, AgreementResult* out);

}  // namespace spccl
