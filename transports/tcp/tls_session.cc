#include "transports/tcp/tls_session.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "base/check.h"
#include "base/libcrypto.h"
#include "base/socket.h"

#if SPCCL_HAVE_OPENSSL_SSL
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#endif

namespace spccl::transport {

spcclResult_t parseTlsMode(const std::string& text, TlsMode* out) {
  if (text.empty() || text == "off") {
    *out = TlsMode::Off;
  } else if (text == "psk") {
    *out = TlsMode::Psk;
  } else if (text == "cert") {
    *out = TlsMode::Cert;
  } else {
    return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_TLS=%s: expected off, psk or cert",
                      text.c_str());
  }
  return spcclSuccess;
}

const char* tlsModeName(TlsMode mode) {
  switch (mode) {
    case TlsMode::Psk:
      return "psk";
    case TlsMode::Cert:
      return "cert";
    case TlsMode::Off:
      break;
  }
  return "off";
}

#if !SPCCL_HAVE_OPENSSL_SSL

spcclResult_t TlsContext::create(const TlsSettings& settings, std::shared_ptr<TlsContext>*) {
  return SPCCL_FAIL(spcclInvalidUsage,
                    "SPCCL_TLS=%s: this spccl was built without OpenSSL's libssl (install "
                    "libssl-dev and rebuild)",
                    tlsModeName(settings.mode));
}
TlsContext::~TlsContext() = default;
spcclResult_t TlsSession::create(std::shared_ptr<TlsContext>, int, bool, const std::string&,
                                 const std::string&, const std::string&,
                                 std::unique_ptr<TlsSession>*) {
  return SPCCL_FAIL(spcclInvalidUsage, "TLS: built without OpenSSL's libssl");
}
TlsSession::~TlsSession() = default;
spcclResult_t TlsSession::handshake(bool*) { return spcclInternalError; }
spcclResult_t TlsSession::write(const void*, size_t, size_t*) { return spcclInternalError; }
spcclResult_t TlsSession::read(void*, size_t, size_t*) { return spcclInternalError; }
bool TlsSession::peerCertificateNames(const std::string&, const std::string&) const {
  return false;
}
std::string TlsSession::peerSubject() const { return "no certificate"; }

#else

namespace {

// TLS_AES_128_GCM_SHA256: the PSK's session cipher (its hash, SHA-256, is
// the PSK's, RFC 8446 section 4.2.11).
constexpr unsigned char kPskCipherId[] = {0x13, 0x01};
constexpr char kPskCiphersuites[] = "TLS_AES_128_GCM_SHA256";
constexpr char kCertCiphersuites[] = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384";
// Larger reads than one record per recv(2) (with read-ahead).
constexpr size_t kReadBufferBytes = size_t{128} * 1024;

std::string opensslErrors() {
  std::string text;
  char line[256];
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    ERR_error_string_n(e, line, sizeof(line));
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text.empty() ? "no detail from OpenSSL" : text;
}

// A socket BIO that sends with MSG_NOSIGNAL: OpenSSL's own writes with
// write(2), and a peer gone away would raise SIGPIPE in the application.
int bioWrite(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const int fd = *static_cast<const int*>(BIO_get_data(bio));
  ssize_t sent;
  do sent = send(fd, data, static_cast<size_t>(size), MSG_NOSIGNAL | MSG_DONTWAIT);
  while (sent < 0 && errno == EINTR);
  if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(bio);
  return static_cast<int>(sent);
}

int bioRead(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  const int fd = *static_cast<const int*>(BIO_get_data(bio));
  ssize_t got;
  do got = recv(fd, data, static_cast<size_t>(size), MSG_DONTWAIT);
  while (got < 0 && errno == EINTR);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(bio);
  return static_cast<int>(got);
}

long bioCtrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int bioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

BIO_METHOD* noSigpipeSocketMethod() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "spccl socket");
    if (m != nullptr) {
      BIO_meth_set_write(m, bioWrite);
      BIO_meth_set_read(m, bioRead);
      BIO_meth_set_ctrl(m, bioCtrl);
      BIO_meth_set_create(m, bioCreate);
    }
    return m;
  }();
  return method;
}

const TlsContext* contextOf(SSL* ssl) {
  return static_cast<const TlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
}

// The external PSK as a TLS 1.3 session (how OpenSSL takes one).
SSL_SESSION* pskSession(SSL* ssl, const TlsContext& context) {
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, kPskCipherId);
  SSL_SESSION* session = SSL_SESSION_new();
  const TlsPsk& psk = context.settings().psk;
  if (cipher == nullptr || session == nullptr ||
      SSL_SESSION_set1_master_key(session, psk.data(), psk.size()) != 1 ||
      SSL_SESSION_set_cipher(session, cipher) != 1 ||
      SSL_SESSION_set_protocol_version(session, TLS1_3_VERSION) != 1) {
    SSL_SESSION_free(session);
    return nullptr;
  }
  return session;
}

int usePskSession(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* idlen,
                  SSL_SESSION** sess) {
  const TlsContext& context = *contextOf(ssl);
  SSL_SESSION* session = pskSession(ssl, context);
  if (session == nullptr) return 0;
  if (md != nullptr && md != SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(session))) {
    SSL_SESSION_free(session);  // a retry after HelloRetryRequest with another hash
    *sess = nullptr;
    return 1;
  }
  *id = reinterpret_cast<const unsigned char*>(context.pskIdentity().data());
  *idlen = context.pskIdentity().size();
  *sess = session;
  return 1;
}

int findPskSession(SSL* ssl, const unsigned char* identity, size_t length, SSL_SESSION** sess) {
  const TlsContext& context = *contextOf(ssl);
  const std::string& expected = context.pskIdentity();
  *sess = nullptr;
  if (length != expected.size() || std::memcmp(identity, expected.data(), length) != 0)
    return 1;  // another communicator's key: no PSK, and without certificates no handshake
  *sess = pskSession(ssl, context);
  return *sess == nullptr ? 0 : 1;
}

}  // namespace

spcclResult_t TlsContext::create(const TlsSettings& settings, std::shared_ptr<TlsContext>* out) {
  SPCCL_CHECK(libcryptoReady());
  std::shared_ptr<TlsContext> context(new TlsContext(settings));
  SSL_CTX* ctx = SSL_CTX_new(TLS_method());
  if (ctx == nullptr)
    return SPCCL_FAIL(spcclSystemError, "SPCCL_TLS: SSL_CTX_new failed: %s",
                      opensslErrors().c_str());
  context->ctx_ = ctx;
  SSL_CTX_set_app_data(ctx, context.get());
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  // No resumption: each connection lives as long as its communicator.
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_default_read_buffer_len(ctx, kReadBufferBytes);
  if (settings.mode == TlsMode::Psk) {
    context->pskIdentity_ = tlsPskIdentity(settings.commId);
    if (SSL_CTX_set_ciphersuites(ctx, kPskCiphersuites) != 1)
      return SPCCL_FAIL(spcclSystemError, "SPCCL_TLS=psk: %s", opensslErrors().c_str());
    SSL_CTX_set_psk_use_session_callback(ctx, usePskSession);
    SSL_CTX_set_psk_find_session_callback(ctx, findPskSession);
  } else {
    const struct {
      const char* knob;
      const std::string& path;
    } files[] = {{"SPCCL_TLS_CA", settings.caFile},
                 {"SPCCL_TLS_CERT", settings.certFile},
                 {"SPCCL_TLS_KEY", settings.keyFile}};
    for (const auto& file : files)
      if (file.path.empty())
        return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_TLS=cert needs %s (a PEM file)", file.knob);
    if (SSL_CTX_set_ciphersuites(ctx, kCertCiphersuites) != 1)
      return SPCCL_FAIL(spcclSystemError, "SPCCL_TLS=cert: %s", opensslErrors().c_str());
    if (SSL_CTX_load_verify_locations(ctx, settings.caFile.c_str(), nullptr) != 1)
      return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_TLS_CA=%s: %s", settings.caFile.c_str(),
                        opensslErrors().c_str());
    if (SSL_CTX_use_certificate_chain_file(ctx, settings.certFile.c_str()) != 1)
      return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_TLS_CERT=%s: %s", settings.certFile.c_str(),
                        opensslErrors().c_str());
    if (SSL_CTX_use_PrivateKey_file(ctx, settings.keyFile.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1)
      return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_TLS_KEY=%s (for SPCCL_TLS_CERT=%s): %s",
                        settings.keyFile.c_str(), settings.certFile.c_str(),
                        opensslErrors().c_str());
    // Both sides present a certificate from the CA (mutual TLS).
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  *out = std::move(context);
  return spcclSuccess;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

spcclResult_t TlsSession::create(std::shared_ptr<TlsContext> context, int fd, bool server,
                                 const std::string& peerName, const std::string& expectedHost,
                                 const std::string& expectedIp, std::unique_ptr<TlsSession>* out) {
  std::unique_ptr<TlsSession> session(new TlsSession());
  session->context_ = std::move(context);
  session->peerName_ = peerName;
  session->expectedHost_ = expectedHost;
  session->expectedIp_ = expectedIp;
  ERR_clear_error();
  session->ssl_ = SSL_new(session->context_->raw());
  BIO* bio = noSigpipeSocketMethod() != nullptr ? BIO_new(noSigpipeSocketMethod()) : nullptr;
  if (session->ssl_ == nullptr || bio == nullptr) {
    BIO_free(bio);
    return SPCCL_FAIL(spcclSystemError, "TLS with %s: %s", peerName.c_str(),
                      opensslErrors().c_str());
  }
  session->fd_ = fd;
  BIO_set_data(bio, &session->fd_);  // the session outlives its BIO
  SSL_set_bio(session->ssl_, bio, bio);
  if (server)
    SSL_set_accept_state(session->ssl_);
  else
    SSL_set_connect_state(session->ssl_);
  session->wanted_ = server ? POLLIN : POLLOUT;
  *out = std::move(session);
  return spcclSuccess;
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

spcclResult_t TlsSession::failed(int rc, const char* op) {
  const int savedErrno = errno;
  const int error = SSL_get_error(ssl_, rc);
  if (error == SSL_ERROR_WANT_READ) {
    wanted_ = POLLIN;
    return spcclSuccess;
  }
  if (error == SSL_ERROR_WANT_WRITE) {
    wanted_ = POLLOUT;
    return spcclSuccess;
  }
  const char* phase = established_ ? op : "handshake";
  if (error == SSL_ERROR_ZERO_RETURN ||
      (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && savedErrno == 0) ||
      ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
    ERR_clear_error();
    return SPCCL_FAIL(spcclRemoteError, "peer %s closed the connection (TLS %s)", peerName_.c_str(),
                      phase);
  }
  if (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
    return SPCCL_FAIL(net::peerErrorCode(savedErrno), "TLS %s with %s: %s", phase,
                      peerName_.c_str(), strerror(savedErrno));
  std::string why = opensslErrors();
  const long verify = SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK)
    why += std::string(" (peer certificate: ") + X509_verify_cert_error_string(verify) + ")";
  if (!established_ && context_->mode() == TlsMode::Psk)
    why += " (the two ends hold different keys: another job secret or communicator)";
  return SPCCL_FAIL(spcclRemoteError, "TLS %s with %s failed (SPCCL_TLS=%s): %s", phase,
                    peerName_.c_str(), tlsModeName(context_->mode()), why.c_str());
}

spcclResult_t TlsSession::checkServerName() {
  if (context_->mode() != TlsMode::Cert || (expectedHost_.empty() && expectedIp_.empty()))
    return spcclSuccess;
  if (peerCertificateNames(expectedHost_, expectedIp_)) return spcclSuccess;
  return SPCCL_FAIL(spcclRemoteError,
                    "TLS handshake with %s (SPCCL_TLS=cert): its certificate (%s) names neither "
                    "the host it announced, %s, nor the address %s",
                    peerName_.c_str(), peerSubject().c_str(), expectedHost_.c_str(),
                    expectedIp_.c_str());
}

spcclResult_t TlsSession::handshake(bool* done) {
  *done = established_;
  if (established_) return spcclSuccess;
  ERR_clear_error();
  errno = 0;
  const int rc = SSL_do_handshake(ssl_);
  if (rc != 1) return failed(rc, "handshake");
  SPCCL_CHECK(checkServerName());
  established_ = true;
  *done = true;
  return spcclSuccess;
}

spcclResult_t TlsSession::write(const void* data, size_t size, size_t* moved) {
  *moved = 0;
  if (size == 0) return spcclSuccess;
  ERR_clear_error();
  errno = 0;
  const int rc = SSL_write_ex(ssl_, data, size, moved);
  return rc == 1 ? spcclSuccess : failed(rc, "write");
}

spcclResult_t TlsSession::read(void* data, size_t size, size_t* moved) {
  *moved = 0;
  if (size == 0) return spcclSuccess;
  ERR_clear_error();
  errno = 0;
  const int rc = SSL_read_ex(ssl_, data, size, moved);
  return rc == 1 ? spcclSuccess : failed(rc, "read");
}

bool TlsSession::peerCertificateNames(const std::string& host, const std::string& ip) const {
  X509* cert = SSL_get0_peer_certificate(ssl_);
  if (cert == nullptr) return false;
  return (!host.empty() && X509_check_host(cert, host.data(), host.size(), 0, nullptr) == 1) ||
         (!ip.empty() && X509_check_ip_asc(cert, ip.c_str(), 0) == 1);
}

std::string TlsSession::peerSubject() const {
  X509* cert = SSL_get0_peer_certificate(ssl_);
  if (cert == nullptr) return "no certificate";
  char line[256] = {};
  X509_NAME_oneline(X509_get_subject_name(cert), line, sizeof(line));
  return line;
}

#endif  // SPCCL_HAVE_OPENSSL_SSL

}  // namespace spccl::transport
