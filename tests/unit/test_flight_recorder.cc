// The flight recorder's ring and its JSON (runtime/flight_recorder.h,
// runtime/flight_json.h) without processes; the multi-process scenarios are
// tests/tools/test_flight_recorder.py. Also the recorder's own cost per
// call, printed, not asserted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "runtime/flight_json.h"
#include "runtime/flight_recorder.h"

namespace spccl {
namespace {

// What the writer or the recorder sends to an fd, through a pipe.
class Capture {
 public:
  Capture() { EXPECT_EQ(pipe(fds_), 0); }
  ~Capture() {
    if (fds_[1] >= 0) close(fds_[1]);
    close(fds_[0]);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  int fd() const { return fds_[1]; }
  std::string text() {
    close(fds_[1]);
    fds_[1] = -1;
    std::string out;
    char buffer[4096];
    for (ssize_t n; (n = read(fds_[0], buffer, sizeof(buffer))) > 0;) out.append(buffer, n);
    return out;
  }

 private:
  int fds_[2] = {-1, -1};
};

CollSignature allReduce(uint64_t count) {
  CollSignature signature;
  signature.type = CollType::AllReduce;
  signature.datatype = spcclFloat32;
  signature.op = spcclSum;
  signature.count = count;
  return signature;
}

TEST(FlightJson, EscapesAndFlushesThroughASmallBuffer) {
  Capture capture;
  char buffer[7];  // smaller than the output: flushes on the way
  FlightJsonWriter out(buffer, sizeof(buffer), capture.fd());
  out.raw("{");
  out.key("text", true);
  out.string("a\"b\\c\nd\x01");
  out.key("n");
  out.signedNumber(-1234567890123);
  out.key("u");
  out.unsignedNumber(18446744073709551615ull);
  out.key("id");
  out.hex64(0x52a718c0937667adull);
  out.key("none");
  out.string(nullptr);
  out.raw("}");
  ASSERT_TRUE(out.flush());
  EXPECT_EQ(capture.text(),
            "{\"text\":\"a\\\"b\\\\c\\nd\\u0001\",\"n\":-1234567890123,"
            "\"u\":18446744073709551615,\"id\":\"0x52a718c0937667ad\",\"none\":null}");
}

TEST(FlightRecorder, KeepsTheLastCallsOldestFirst) {
  FlightRecorder recorder(4, 0xabc, 1, 3);
  spcclCounters_t counters{};
  for (uint64_t seq = 1; seq <= 6; ++seq) {
    recorder.begin(seq, allReduce(seq * 10), counters);
    recorder.noteAlgorithm(seq, "ring");
    counters.bytesSent += 100;
    recorder.noteSent(2, seq, 100);
    recorder.noteReceived(0, seq, 40);
    if (seq < 6) recorder.end(seq, spcclSuccess, counters);
  }
  recorder.failRunning(spcclTimeout, "rank 1 timed out \"here\"");
  Capture capture;
  ASSERT_TRUE(recorder.dump(capture.fd(), "spcclCommDump", nullptr));
  const std::string json = capture.text();
  EXPECT_NE(json.find("\"comm\":\"0x0000000000000abc\",\"rank\":1,\"nranks\":3"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"capacity\":4,\"calls_recorded\":6"), std::string::npos) << json;
  // Calls 3 to 6, in order; 6 still running, with the engine's error.
  const size_t first = json.find("{\"call\":3,");
  ASSERT_NE(first, std::string::npos) << json;
  EXPECT_EQ(json.find("{\"call\":2,"), std::string::npos) << json;
  EXPECT_LT(first, json.find("{\"call\":4,"));
  EXPECT_LT(json.find("{\"call\":5,"), json.find("{\"call\":6,"));
  EXPECT_NE(json.find("\"count\":50,\"bytes\":200,\"op\":\"sum\",\"root\":-1,\"algorithm\":"
                      "\"ring\",\"state\":\"done\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"sent_bytes\":100,\"received_bytes\":0}"), std::string::npos) << json;
  EXPECT_NE(json.find("\"state\":\"running\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"result\":\"timeout\",\"error\":\"rank 1 timed out \\\"here\\\"\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"rank\":0,\"sent_bytes\":0,\"received_bytes\":240,\"last_call_sent\":0,"
                      "\"last_call_received\":6}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"rank\":2,\"sent_bytes\":600,"), std::string::npos) << json;
  EXPECT_EQ(json.find("{\"rank\":1,"), std::string::npos) << "no entry for itself: " << json;
  EXPECT_EQ(json.back(), '\n');
  EXPECT_EQ(json.find('\n'), json.size() - 1) << "one line";
}

TEST(FlightRecorder, CostPerCall) {
  FlightRecorder recorder(64, 1, 0, 2);
  spcclCounters_t counters{};
  const CollSignature signature = allReduce(1);
  constexpr int kCalls = 1000000;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t seq = 1; seq <= kCalls; ++seq) {
    recorder.begin(seq, signature, counters);
    recorder.noteAlgorithm(seq, "ring");
    recorder.noteSent(1, seq, 4);
    recorder.noteReceived(1, seq, 4);
    recorder.end(seq, spcclSuccess, counters);
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
      kCalls;
  std::printf("flight recorder: %.1f ns per call (begin, algorithm, a message each way, end)\n",
              ns);
  SUCCEED();
}

}  // namespace
}  // namespace spccl
