#include "runtime/call_log.h"

#include <cinttypes>
#include <cstdio>

#include "base/log.h"
#include "runtime/engine.h"

namespace spccl {

bool collReduces(CollType type) {
  return type == CollType::AllReduce || type == CollType::Reduce ||
         type == CollType::ReduceScatter || type == CollType::SparseAllReduce ||
         type == CollType::CompressedAllReduce;
}

bool collRooted(const CollSignature& signature) {
  return signature.root >= 0 &&
         (signature.type == CollType::Broadcast || signature.type == CollType::Reduce ||
          signature.type == CollType::Migration);
}

namespace {

// "1.63 ms": three significant figures in the unit that fits.
void formatDuration(double seconds, char* out, size_t size) {
  if (seconds < 1e-3)
    std::snprintf(out, size, "%.1f us", seconds * 1e6);
  else if (seconds < 1.0)
    std::snprintf(out, size, "%.2f ms", seconds * 1e3);
  else
    std::snprintf(out, size, "%.2f s", seconds);
}

}  // namespace

bool callLogEnabled(const CollSignature& signature) {
  return signature.type != CollType::Internal && logEnabled(LogLevel::Info, kLogColl);
}

void logCall(const Engine& engine, const CollSignature& signature, const CallChoice& choice,
             const CallRecord& record) {
  const auto datatype = static_cast<spcclDataType_t>(signature.datatype);
  char what[160];
  if (signature.type == CollType::AllToAllv || signature.type == CollType::Barrier) {
    std::snprintf(what, sizeof(what), "%s",
                  signature.type == CollType::Barrier ? "no data" : "per-peer counts");
  } else {
    std::snprintf(what, sizeof(what), "count %" PRIu64 " %s (%" PRIu64 " bytes)", signature.count,
                  spcclTypeName(datatype), signature.count * spcclTypeSize(datatype));
  }
  char extra[64] = "";
  int used = 0;
  if (collReduces(signature.type))
    used = std::snprintf(extra, sizeof(extra), " op %s",
                         spcclOpName(static_cast<spcclRedOp_t>(signature.op)));
  if (collRooted(signature))
    std::snprintf(extra + used, sizeof(extra) - static_cast<size_t>(used), " root %d",
                  signature.root);
  char took[32];
  formatDuration(record.seconds, took, sizeof(took));
  const bool explained = choice.algorithm != nullptr && !choice.reason.empty();
  SPCCL_INFO(kLogColl,
             "%s #%" PRIu64 " comm 0x%016" PRIx64
             " rank %d nranks %d: %s%s; algorithm %s%s%s%s; %s, sent %" PRIu64 " bytes%s%s",
             collTypeName(signature.type), record.seq, engine.settings().commId, engine.rank(),
             engine.nranks(), what, extra, choice.algorithm ? choice.algorithm : "(not reported)",
             explained ? " (" : "", explained ? choice.reason.c_str() : "", explained ? ")" : "",
             took, record.bytesSent, record.result == spcclSuccess ? "" : "; failed: ",
             record.result == spcclSuccess ? "" : spcclGetErrorString(record.result));
}

}  // namespace spccl
