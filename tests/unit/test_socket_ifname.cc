// Interface selection (NCCL_SOCKET_IFNAME syntax) and address text helpers.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "base/socket.h"

namespace spccl::net {
namespace {

TEST(SocketIfnameSpec, EmptySpecSelectsEverything) {
  IfnameSpec spec = parseIfnameSpec("");
  EXPECT_FALSE(spec.exclude);
  EXPECT_FALSE(spec.exact);
  EXPECT_TRUE(spec.names.empty());
  EXPECT_TRUE(ifnameMatches(spec, "eth0"));
  EXPECT_TRUE(ifnameMatches(spec, "lo"));
}

TEST(SocketIfnameSpec, PrefixList) {
  IfnameSpec spec = parseIfnameSpec("eth,ib");
  EXPECT_FALSE(spec.exclude);
  EXPECT_FALSE(spec.exact);
  ASSERT_EQ(spec.names.size(), 2u);
  EXPECT_EQ(spec.names[0], "eth");
  EXPECT_EQ(spec.names[1], "ib");
  EXPECT_TRUE(ifnameMatches(spec, "eth0"));
  EXPECT_TRUE(ifnameMatches(spec, "ib1"));
  EXPECT_FALSE(ifnameMatches(spec, "lo"));
  EXPECT_FALSE(ifnameMatches(spec, "et"));
}

TEST(SocketIfnameSpec, ExcludePrefixes) {
  IfnameSpec spec = parseIfnameSpec("^docker,lo");
  EXPECT_TRUE(spec.exclude);
  EXPECT_FALSE(spec.exact);
  EXPECT_FALSE(ifnameMatches(spec, "docker0"));
  EXPECT_FALSE(ifnameMatches(spec, "lo"));
  EXPECT_TRUE(ifnameMatches(spec, "eth0"));
}

TEST(SocketIfnameSpec, ExactNames) {
  IfnameSpec spec = parseIfnameSpec("=eth0,lo");
  EXPECT_FALSE(spec.exclude);
  EXPECT_TRUE(spec.exact);
  EXPECT_TRUE(ifnameMatches(spec, "eth0"));
  EXPECT_FALSE(ifnameMatches(spec, "eth01"));
  EXPECT_TRUE(ifnameMatches(spec, "lo"));
  EXPECT_FALSE(ifnameMatches(spec, "lo1"));
}

TEST(SocketIfnameSpec, ExcludeExactInBothOrders) {
  for (const char* text : {"^=eth0", "=^eth0"}) {
    IfnameSpec spec = parseIfnameSpec(text);
    EXPECT_TRUE(spec.exclude) << text;
    EXPECT_TRUE(spec.exact) << text;
    ASSERT_EQ(spec.names.size(), 1u) << text;
    EXPECT_EQ(spec.names[0], "eth0");
    EXPECT_FALSE(ifnameMatches(spec, "eth0")) << text;
    EXPECT_TRUE(ifnameMatches(spec, "eth01")) << text;
    EXPECT_TRUE(ifnameMatches(spec, "lo")) << text;
  }
}

TEST(SocketIfnameSpec, IgnoresEmptyItemsAndSpaces) {
  IfnameSpec spec = parseIfnameSpec("eth0, ,ib0,");
  ASSERT_EQ(spec.names.size(), 2u);
  EXPECT_EQ(spec.names[0], "eth0");
  EXPECT_EQ(spec.names[1], "ib0");
  IfnameSpec onlyFlags = parseIfnameSpec("^=");
  EXPECT_TRUE(onlyFlags.exclude);
  EXPECT_TRUE(onlyFlags.exact);
  EXPECT_TRUE(onlyFlags.names.empty());
}

TEST(SocketFamily, ParsesKnobValues) {
  EXPECT_EQ(parseSocketFamily(""), AF_UNSPEC);
  EXPECT_EQ(parseSocketFamily("AF_INET"), AF_INET);
  EXPECT_EQ(parseSocketFamily("AF_INET6"), AF_INET6);
  EXPECT_EQ(parseSocketFamily("6"), AF_INET6);
  EXPECT_EQ(parseSocketFamily("AF_UNIX"), -1);
}

TEST(SocketAddress, Ipv4RoundTrip) {
  SockAddr addr;
  ASSERT_EQ(parseHostPort("10.1.2.3:5000", &addr), spcclSuccess);
  EXPECT_EQ(addr.sa.sa_family, AF_INET);
  EXPECT_EQ(sockAddrPort(addr), 5000);
  EXPECT_EQ(sockAddrLen(addr), sizeof(sockaddr_in));
  EXPECT_EQ(toString(addr), "10.1.2.3:5000");
  setSockAddrPort(&addr, 7);
  EXPECT_EQ(toString(addr), "10.1.2.3:7");
}

TEST(SocketAddress, Ipv6RoundTrip) {
  SockAddr addr;
  ASSERT_EQ(parseHostPort("[fd00::1]:65535", &addr), spcclSuccess);
  EXPECT_EQ(addr.sa.sa_family, AF_INET6);
  EXPECT_EQ(sockAddrPort(addr), 65535);
  EXPECT_EQ(sockAddrLen(addr), sizeof(sockaddr_in6));
  EXPECT_EQ(toString(addr), "[fd00::1]:65535");
}

TEST(SocketAddress, Ipv6ScopeIsNamed) {
  SockAddr addr;
  ASSERT_EQ(parseHostPort("[fe80::1%lo]:80", &addr), spcclSuccess);
  EXPECT_NE(addr.sin6.sin6_scope_id, 0u);
  EXPECT_EQ(toString(addr), "[fe80::1%lo]:80");
}

TEST(SocketAddress, ResolvesNames) {
  SockAddr addr;
  ASSERT_EQ(parseHostPort("localhost:1234", &addr), spcclSuccess);
  EXPECT_EQ(sockAddrPort(addr), 1234);
  std::string text = toString(addr);
  EXPECT_TRUE(text == "127.0.0.1:1234" || text == "[::1]:1234") << text;
}

TEST(SocketAddress, RejectsMalformedText) {
  SockAddr addr;
  for (const char* bad : {"", "host", "1.2.3.4:", ":80", "1.2.3.4:70000", "1.2.3.4:8x", "::1:80",
                          "[::1]80", "[::1"}) {
    EXPECT_EQ(parseHostPort(bad, &addr), spcclInvalidArgument) << bad;
  }
}

TEST(SocketInterfaces, FindsLoopbackByExactName) {
  std::vector<Interface> found;
  ASSERT_EQ(findInterfaces("=lo", AF_INET, &found), spcclSuccess);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].name, "lo");
  EXPECT_EQ(found[0].addr.sa.sa_family, AF_INET);
  EXPECT_EQ(sockAddrPort(found[0].addr), 0);
  EXPECT_EQ(toString(found[0].addr), "127.0.0.1:0");
}

TEST(SocketInterfaces, ExcludingLoopbackNeverReturnsIt) {
  std::vector<Interface> found;
  ASSERT_EQ(findInterfaces("^=lo", AF_UNSPEC, &found), spcclSuccess);
  for (const Interface& iface : found) EXPECT_NE(iface.name, "lo");
}

TEST(SocketInterfaces, DefaultSkipsLoopbackUnlessAlone) {
  std::vector<Interface> all, chosen;
  ASSERT_EQ(findInterfaces("^=", AF_UNSPEC, &all), spcclSuccess);
  ASSERT_EQ(findInterfaces("", AF_UNSPEC, &chosen), spcclSuccess);
  ASSERT_FALSE(chosen.empty());
  bool onlyLoopback = true;
  for (const Interface& iface : all)
    if (iface.name != "lo" && iface.name.rfind("docker", 0) != 0) onlyLoopback = false;
  if (!onlyLoopback) {
    for (const Interface& iface : chosen) EXPECT_NE(iface.name, "lo");
  }
}

TEST(SocketInterfaces, UnknownNameIsAnErrorNamingTheSpec) {
  Interface iface;
  EXPECT_EQ(pickInterface("=no-such-interface0", AF_UNSPEC, &iface), spcclInvalidArgument);
}

}  // namespace
}  // namespace spccl::net
