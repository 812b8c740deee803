// The knob and environment parsers: launch discovery from the launchers'
// variables (src/core/env_discovery.h, Slurm hostlists included),
// SPCCL_COMM_ID's host:port, SPCCL_SOCKET_IFNAME and SPCCL_SOCKET_FAMILY
// (src/base/socket.h), the integer knobs (src/base/knobs.h) and the C API's
// enum checks (src/base/enum_args.h).
// Input: [selector u8][text].
#include <arpa/inet.h>
#include <sys/socket.h>

#include <string>

#include "base/enum_args.h"
#include "base/knobs.h"
#include "base/socket.h"
#include "core/env_discovery.h"
#include "fuzz_support.h"

using namespace spccl;

namespace {

std::string textOf(fuzz::Input& in) {
  const std::vector<unsigned char> bytes = in.rest();
  return std::string(bytes.begin(), bytes.end());
}

// NAME=VALUE lines.
void launchEnv(const std::string& text) {
  EnvMap env;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    pos = end + 1;
  }
  // A path from the input would make the harness read arbitrary files.
  env.erase(kEnvJobSecretFile);
  LaunchEnv out;
  if (discoverLaunchEnv(env, &out) != spcclSuccess) return;
  SPCCL_FUZZ_CHECK(out.nranks >= 1 && out.rank >= 0 && out.rank < out.nranks);
  SPCCL_FUZZ_CHECK(out.localRank >= -1);
  SPCCL_FUZZ_CHECK(out.rootPort >= 0 && out.rootPort <= 65535);
  SPCCL_FUZZ_CHECK(!out.rootHost.empty());
  SPCCL_FUZZ_CHECK(out.secret.size == 0 ||
                   (out.secret.size >= kSecretMinBytes && out.secret.size <= kSecretMaxBytes));
}

// host:port text both ways: what splitHostPort accepts, formatHostPort
// writes back so that it splits the same.
void hostPort(const std::string& text) {
  std::string host;
  int port = -1;
  if (splitHostPort(kEnvCommId, text, &host, &port) == spcclSuccess) {
    SPCCL_FUZZ_CHECK(!host.empty() && port >= 0 && port <= 65535);
    std::string again;
    int againPort = -1;
    if (host.find_first_of("[]") == std::string::npos) {
      SPCCL_FUZZ_CHECK(splitHostPort(kEnvCommId, formatHostPort(host, port), &again, &againPort) ==
                       spcclSuccess);
      SPCCL_FUZZ_CHECK(again == host && againPort == port);
    }
  }
  // parseHostPort resolves names: only numeric hosts here, so that the
  // harness never waits for DNS.
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return;
  std::string literal = text.substr(0, colon);
  if (!literal.empty() && literal.front() == '[' && literal.back() == ']')
    literal = literal.substr(1, literal.size() - 2);
  literal = literal.substr(0, literal.find('%'));
  unsigned char buffer[sizeof(in6_addr)];
  if (literal.find('\0') != std::string::npos) return;
  if (inet_pton(AF_INET, literal.c_str(), buffer) != 1 &&
      inet_pton(AF_INET6, literal.c_str(), buffer) != 1)
    return;
  net::SockAddr addr{};
  if (net::parseHostPort(text, &addr) == spcclSuccess) {
    SPCCL_FUZZ_CHECK(addr.sa.sa_family == AF_INET || addr.sa.sa_family == AF_INET6);
    SPCCL_FUZZ_CHECK(net::sockAddrPort(addr) >= 0 && net::sockAddrPort(addr) <= 65535);
    SPCCL_FUZZ_CHECK(!net::toString(addr).empty());
  }
}

void ifname(const std::string& text) {
  const net::IfnameSpec spec = net::parseIfnameSpec(text);
  for (const std::string& name : spec.names) {
    SPCCL_FUZZ_CHECK(!name.empty() && name.find(',') == std::string::npos);
    SPCCL_FUZZ_CHECK(name.front() != ' ' && name.back() != ' ');
    // A listed name selects (or, with ^, excludes) itself.
    SPCCL_FUZZ_CHECK(net::ifnameMatches(spec, name) != spec.exclude);
  }
  for (const char* name : {"eth0", "lo", "ib0", "docker0", ""})
    (void)net::ifnameMatches(spec, name);
  const int family = net::parseSocketFamily(text);
  SPCCL_FUZZ_CHECK(family == -1 || family == AF_UNSPEC || family == AF_INET || family == AF_INET6);
}

// One declared knob set to the text, read back as a string and an integer.
void knob(uint8_t which, const std::string& text) {
  const std::vector<KnobSpec>& knobs = allKnobs();
  const KnobSpec& spec = knobs[which % knobs.size()];
  // The log's own knobs would undo quietLogs.
  if (std::strncmp(spec.name, "SPCCL_DEBUG", 11) == 0) return;
  if (text.find('\0') != std::string::npos) return;
  setenv(spec.name, text.c_str(), 1);
  const std::string value = knobString(spec.name);
  SPCCL_FUZZ_CHECK(value == (text.empty() ? std::string(spec.defaultValue) : text) || text.empty());
  (void)knobInt(spec.name);
  unsetenv(spec.name);
}

// A C caller may pass any int; the C++ side must not load it through the
// enum type before validEnum said yes (enum_args.h).
void enums(fuzz::Input& in) {
  const int rawType = in.take<int>(), rawOp = in.take<int>();
  spcclDataType_t type;
  spcclRedOp_t op;
  std::memcpy(&type, &rawType, sizeof(type));
  std::memcpy(&op, &rawOp, sizeof(op));
  const bool validType = validEnum(type, spcclNumTypes);
  const bool validOp = validEnum(op, spcclNumOps);
  SPCCL_FUZZ_CHECK(validType == (rawType >= 0 && rawType < spcclNumTypes));
  SPCCL_FUZZ_CHECK(validOp == (rawOp >= 0 && rawOp < spcclNumOps));
  if (validType) SPCCL_FUZZ_CHECK(spcclTypeName(type) != nullptr);
  if (validOp) SPCCL_FUZZ_CHECK(spcclOpName(op) != nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t selector = in.take<uint8_t>();
  switch (selector % 5) {
    case 0:
      launchEnv(textOf(in));
      break;
    case 1:
      hostPort(textOf(in));
      break;
    case 2:
      ifname(textOf(in));
      break;
    case 3:
      knob(selector / 5, textOf(in));
      break;
    default:
      enums(in);
      break;
  }
  return 0;
}
