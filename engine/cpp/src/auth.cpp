#include "auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace spindle {
namespace auth {

namespace {

constexpr char kMagic[] = "SPDLAUT1";  // 8 bytes on the wire, no NUL
constexpr size_t kMagicLen = 8, kNonce = 32, kMac = 32;
constexpr int kHandshakeTimeoutSeconds = 10;

using Bytes = std::string;

Bytes mac(const std::string& secret, const char* label, const Bytes& nc, const Bytes& ns) {
  Bytes msg = std::string(label) + nc + ns;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), secret.data(), int(secret.size()),
            reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out, &len) ||
      len != kMac)
    throw AuthFailed("HMAC-SHA256 failed");
  return Bytes(reinterpret_cast<char*>(out), len);
}

Bytes nonce() {
  unsigned char buf[kNonce];
  if (RAND_bytes(buf, sizeof buf) != 1) throw AuthFailed("no random bytes for a nonce");
  return Bytes(reinterpret_cast<char*>(buf), sizeof buf);
}

bool same(const Bytes& a, const Bytes& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

void sendAll(int fd, const Bytes& data) {
  for (size_t sent = 0; sent < data.size();) {
    ssize_t k = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw AuthFailed(std::string("handshake send: ") + std::strerror(errno));
    sent += size_t(k);
  }
}

Bytes recvExact(int fd, size_t n) {
  Bytes out(n, '\0');
  for (size_t got = 0; got < n;) {
    ssize_t k = ::recv(fd, &out[got], n - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) throw AuthFailed("connection closed during the authentication handshake");
    if (k < 0) throw AuthFailed(std::string("handshake receive: ") + std::strerror(errno));
    got += size_t(k);
  }
  return out;
}

/** Bounds the handshake's reads; restores the socket's receive timeout afterwards. */
class RecvTimeout {
 public:
  explicit RecvTimeout(int fd) : fd_(fd) {
    socklen_t len = sizeof before_;
    if (getsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &before_, &len) != 0) before_ = timeval{0, 0};
    timeval tv{kHandshakeTimeoutSeconds, 0};
    if (before_.tv_sec == 0 && before_.tv_usec == 0) setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RecvTimeout() { setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &before_, sizeof before_); }

 private:
  int fd_;
  timeval before_{0, 0};
};

}  // namespace

const std::string& secret() {
  static const std::string value = [] {
    const char* v = std::getenv("SPINDLE_CLUSTER_SECRET");
    return std::string(v ? v : "");
  }();
  return value;
}

void serverHandshake(int fd, const std::string& secret) {
  if (secret.empty()) return;
  RecvTimeout bound(fd);
  Bytes hello = recvExact(fd, kMagicLen + kNonce);
  if (!same(hello.substr(0, kMagicLen), Bytes(kMagic, kMagicLen)))
    throw AuthFailed("the client did not start the authentication handshake");
  Bytes nc = hello.substr(kMagicLen), ns = nonce();
  sendAll(fd, ns + mac(secret, "server", nc, ns));
  if (!same(recvExact(fd, kMac), mac(secret, "client", nc, ns)))
    throw AuthFailed("the client does not hold the cluster secret");
}

void clientHandshake(int fd, const std::string& secret) {
  if (secret.empty()) return;
  RecvTimeout bound(fd);
  Bytes nc = nonce();
  sendAll(fd, Bytes(kMagic, kMagicLen) + nc);
  Bytes answer = recvExact(fd, kNonce + kMac);
  Bytes ns = answer.substr(0, kNonce);
  if (!same(answer.substr(kNonce), mac(secret, "server", nc, ns)))
    throw AuthFailed("the server does not hold the cluster secret");
  sendAll(fd, mac(secret, "client", nc, ns));
}

}  // namespace auth
}  // namespace spindle
