// TLS 1.3 on the tcp transport's connections (SPCCL_TLS=psk or cert).
// TLS starts right after the TCP connect, so everything spccl sends on a
// connection, its authenticated hello included, travels inside it; the
// hello still binds the connection to its communicator, ranks and lane,
// which the key (one per communicator) cannot. Every operation is
// non-blocking: it moves what the socket allows and says which poll(2)
// event it waits for (docs/security.md, "Encryption in transit").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "spccl.h"
#include "transports/tcp/tls_keys.h"

struct ssl_st;
struct ssl_ctx_st;

namespace spccl::transport {

enum class TlsMode { Off, Psk, Cert };

// SPCCL_TLS's value; anything but off, psk or cert is refused naming it.
spcclResult_t parseTlsMode(const std::string& text, TlsMode* out);
const char* tlsModeName(TlsMode mode);

struct TlsSettings {
  TlsMode mode = TlsMode::Off;
  uint64_t commId = 0;
  TlsPsk psk{};                           // psk: from deriveTlsPsk
  std::string caFile, certFile, keyFile;  // cert: SPCCL_TLS_CA, SPCCL_TLS_CERT, SPCCL_TLS_KEY
};

// One communicator's TLS configuration (an SSL_CTX for both roles), shared
// by its listeners and connections.
class TlsContext {
 public:
  static spcclResult_t create(const TlsSettings& settings, std::shared_ptr<TlsContext>* out);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  TlsMode mode() const { return settings_.mode; }
  const TlsSettings& settings() const { return settings_; }
  ssl_ctx_st* raw() const { return ctx_; }
  const std::string& pskIdentity() const { return pskIdentity_; }

 private:
  explicit TlsContext(const TlsSettings& settings) : settings_(settings) {}
  TlsSettings settings_;
  std::string pskIdentity_;
  ssl_ctx_st* ctx_ = nullptr;
};

// One TLS connection over a connected non-blocking socket.
class TlsSession {
 public:
  // expectedHost/expectedIp: cert mode, client side: the names the
  // server's certificate must carry one of ("" for none to check).
  static spcclResult_t create(std::shared_ptr<TlsContext> context, int fd, bool server,
                              const std::string& peerName, const std::string& expectedHost,
                              const std::string& expectedIp, std::unique_ptr<TlsSession>* out);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Moves the handshake on; *done once it has finished and, for a client
  // in cert mode, the server's certificate names the expected host.
  spcclResult_t handshake(bool* done);
  bool established() const { return established_; }
  // Like net::sendvNow / net::recvNow: *moved may be 0 (would block).
  spcclResult_t write(const void* data, size_t size, size_t* moved);
  spcclResult_t read(void* data, size_t size, size_t* moved);
  // POLLIN or POLLOUT: what the last operation that could not finish waits for.
  short wantedEvents() const { return wanted_; }
  // Cert mode: whether the peer's certificate names host or the address ip.
  bool peerCertificateNames(const std::string& host, const std::string& ip) const;
  // The peer certificate's subject, for messages ("no certificate" if none).
  std::string peerSubject() const;

 private:
  TlsSession() = default;
  spcclResult_t failed(int rc, const char* op);
  spcclResult_t checkServerName();

  std::shared_ptr<TlsContext> context_;
  ssl_st* ssl_ = nullptr;
  int fd_ = -1;  // what the BIO sends on and receives from
  std::string peerName_, expectedHost_, expectedIp_;
  bool established_ = false;
  short wanted_ = 0;
};

}  // namespace spccl::transport
