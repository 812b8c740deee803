// The flight recorder's JSON output (runtime/flight_recorder.h): a writer
// into a caller's fixed buffer that hands full buffers to write(2). It
// never allocates, locks or calls stdio, so a fatal-signal handler can use
// it (runtime/flight_signals.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace spccl {

class FlightJsonWriter {
 public:
  // buffer: capacity bytes the writer fills; fd: where full buffers go.
  FlightJsonWriter(char* buffer, size_t capacity, int fd)
      : buffer_(buffer), capacity_(capacity), fd_(fd) {}
  FlightJsonWriter(const FlightJsonWriter&) = delete;
  FlightJsonWriter& operator=(const FlightJsonWriter&) = delete;
  ~FlightJsonWriter() = default;

  // Text as it is (punctuation, keys already quoted).
  void raw(const char* text);
  // "text" with JSON escapes; nullptr: null.
  void string(const char* text);
  void unsignedNumber(uint64_t value);
  void signedNumber(int64_t value);
  // ,"key": (the comma unless first).
  void key(const char* name, bool first = false);
  // "0x%016x"
  void hex64(uint64_t value);
  // Writes what is buffered. False when a write(2) failed (then, and
  // after, nothing more is written).
  bool flush();

 private:
  void put(char c);

  char* buffer_;
  size_t capacity_;
  size_t used_ = 0;
  int fd_;
  bool failed_ = false;
};

}  // namespace spccl
