// The rendezvous table's shared settings (src/core/job_settings.h): every
// rank's RankInfo arrives from the root as bytes, and communicator
// creation compares their JobSettings (checkJobSettingsAgree), text fields
// included; the text fields are then terminated as rendezvousOnce does
// (terminateRankInfoText, core/bootstrap.h), and the device all-reduce's
// peer check reads them (devicesReachEachOther).
// Input: [ranks u8][me u8][a RankInfo per rank].
#include <string>
#include <vector>

#include "core/bootstrap.h"
#include "core/device_collective_call.h"
#include "core/job_settings.h"
#include "fuzz_support.h"

using namespace spccl;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const size_t n = 1 + in.take<uint8_t>() % 3;
  const int me = static_cast<int>(in.take<uint8_t>() % n);
  // Exactly n entries: ASan sees a read past the last one.
  std::vector<RankInfo> ranks(n);
  for (RankInfo& r : ranks) {
    const std::vector<unsigned char> bytes = in.bytes(sizeof(RankInfo));
    if (!bytes.empty()) std::memcpy(&r, bytes.data(), bytes.size());
  }
  const spcclResult_t res = checkJobSettingsAgree(ranks, me);
  // The device all-reduce's peer check reads every rank's list of peer
  // devices (core/device_collective_call.h): never past it, whatever the
  // counts say, and it names a pair when it refuses.
  std::string why;
  if (!devicesReachEachOther(ranks, &why)) SPCCL_FUZZ_CHECK(!why.empty());
  // Identical settings on every rank always agree.
  if (n > 1 && std::memcmp(&ranks[0].job, &ranks[1].job, sizeof(JobSettings)) == 0 &&
      (n < 3 || std::memcmp(&ranks[0].job, &ranks[2].job, sizeof(JobSettings)) == 0))
    SPCCL_FUZZ_CHECK(res == spcclSuccess);
  // What rendezvousOnce does to the table before anything prints it.
  for (RankInfo& r : ranks) {
    terminateRankInfoText(&r);
    SPCCL_FUZZ_CHECK(std::strlen(r.hostname) < sizeof(r.hostname));
    SPCCL_FUZZ_CHECK(std::strlen(r.setupError) < sizeof(r.setupError));
    SPCCL_FUZZ_CHECK(std::strlen(r.job.transport) < sizeof(r.job.transport));
    SPCCL_FUZZ_CHECK(std::strlen(r.job.algorithm) < sizeof(r.job.algorithm));
    SPCCL_FUZZ_CHECK(std::strlen(r.job.tls) < sizeof(r.job.tls));
    SPCCL_FUZZ_CHECK(std::strlen(r.job.wireChecksum) < sizeof(r.job.wireChecksum));
  }
  return 0;
}
