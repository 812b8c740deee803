// The flight recorders of this process, for a fatal signal: when the first
// recorder is registered, handlers for SIGSEGV, SIGABRT and SIGBUS are
// installed (none while every communicator's recorder is off). The handler
// writes every registered recorder's dump to the log's file descriptor
// (SPCCL_DEBUG_FILE, else stderr) with async-signal-safe calls only (a
// static buffer and write(2)), then hands the signal to the handler that
// was installed before, or to the default action.
#pragma once

namespace spccl {

class FlightRecorder;

void registerFlightRecorder(FlightRecorder* recorder);
void unregisterFlightRecorder(FlightRecorder* recorder);

}  // namespace spccl
