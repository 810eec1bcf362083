#include "fetch.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "auth.hpp"
#include "errors.hpp"

namespace spindle {

namespace {

constexpr int kTimeoutSeconds = 60;
// A live file server's kernel answers a SYN at once, whatever its load; a host that vanished
// (its member killed) answers nothing until its replacement holds the IP, so a fetch from it
// must fail fast instead of waiting out SYN retries.
constexpr int kConnectTimeoutSeconds = 5;

/** A connected socket to "HOST:PORT", closed on destruction; throws FETCH_FAILED. */
class Connection {
 public:
  Connection(const std::string& url, const std::string& address) : url_(url), address_(address) {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0) fail("bad address " + address);
    std::string host = address.substr(0, colon), port = address.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0) fail(std::string("cannot resolve ") + address + ": " + gai_strerror(rc));
    std::string why = "no address";
    for (addrinfo* a = res; a && fd_ < 0; a = a->ai_next) {
      int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      timeval connectTv{kConnectTimeoutSeconds, 0}, tv{kTimeoutSeconds, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &connectTv, sizeof connectTv);  // Linux: also connect()
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        // the handshake's proof and the request are two small writes: without this, Nagle
        // holds the request until the server's delayed ACK (40 ms a fetch)
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fd_ = fd;
      } else {
        why = std::strerror(errno);
        ::close(fd);
      }
    }
    freeaddrinfo(res);
    if (fd_ < 0) fail("cannot connect to " + address + ": " + why);
  }
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[noreturn]] void fail(const std::string& reason) const { throw fetchFailed(url_, address_, reason); }

  /** Proves we hold the cluster secret to the file server (engine/rpc/AUTH.md). */
  void authenticate() {
    try {
      auth::clientHandshake(fd_, auth::secret());
    } catch (const auth::AuthFailed& e) {
      fail(e.what());
    }
  }

  void sendAll(const std::string& data) {
    for (size_t sent = 0; sent < data.size();) {
      ssize_t k = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) fail(std::string("send: ") + std::strerror(errno));
      sent += size_t(k);
    }
  }
  /** Up to `n` bytes (0 at end of stream). */
  size_t recvSome(char* buf, size_t n) {
    for (;;) {
      ssize_t k = ::recv(fd_, buf, n, 0);
      if (k >= 0) return size_t(k);
      if (errno != EINTR) fail(std::string("receive: ") + std::strerror(errno));
    }
  }
  void recvAll(char* buf, size_t n, const char* what) {
    for (size_t got = 0; got < n;) {
      size_t k = recvSome(buf + got, n - got);
      if (k == 0) fail(std::string("connection closed while reading ") + what);
      got += k;
    }
  }

 private:
  std::string url_, address_;
  int fd_ = -1;
};

void writeAll(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw TaskFailure("INTERNAL", "cannot write " + path + ": " + std::strerror(errno));
    p += k;
    n -= size_t(k);
  }
}

/** Receives the answer to one GET into the open file `fd`. */
void receive(Connection& c, int fd, const std::string& dest) {
  unsigned char head[8];
  c.recvAll(reinterpret_cast<char*>(head), 8, "the answer");
  int64_t n = 0;
  for (unsigned char b : head) n = int64_t((uint64_t(n) << 8) | b);
  if (n < 0) {
    std::string msg(size_t(-n), '\0');
    c.recvAll(&msg[0], msg.size(), "the error message");
    c.fail("server answered: " + msg);
  }
  std::string buf(size_t(1) << 20, '\0');
  for (int64_t left = n; left > 0;) {
    size_t k = c.recvSome(&buf[0], size_t(std::min<int64_t>(left, int64_t(buf.size()))));
    if (k == 0)
      c.fail("connection closed after " + std::to_string(n - left) + " of " + std::to_string(n) + " bytes");
    writeAll(fd, buf.data(), k, dest);
    left -= int64_t(k);
  }
}

std::string baseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool parseFileUrl(const std::string& s, FileUrl& out) {
  static const std::string scheme = "tcp://";
  if (s.compare(0, scheme.size(), scheme) != 0) return false;
  size_t slash = s.find('/', scheme.size());
  if (slash == std::string::npos || slash == scheme.size()) return false;
  out.host = s.substr(scheme.size(), slash - scheme.size());
  out.path = s.substr(slash);
  return true;
}

bool Fetcher::isLocal(const std::string& pathOrUrl, std::string& local) const {
  FileUrl u;
  if (!parseFileUrl(pathOrUrl, u)) local = pathOrUrl;
  else if (!advertise.empty() && u.host == advertise) local = u.path;
  else return false;
  return true;
}

std::string Fetcher::fetch(const std::string& url, int64_t offset, int64_t length, const std::string& tag) {
  FileUrl u;
  if (!parseFileUrl(url, u)) throw fetchFailed(url, "", "not a tcp:// URL");
  std::string dest = dir + "/" + tag + "-cpp" + std::to_string(id) + "-" + std::to_string(getpid()) + "-" +
                     std::to_string(n_++) + "-" + baseName(u.path);
  Connection c(url, u.host);
  c.authenticate();
  c.sendAll("GET " + std::to_string(offset) + " " + std::to_string(length) + " " + u.path + "\n");
  int fd = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw TaskFailure("INTERNAL", "cannot create " + dest + ": " + std::strerror(errno));
  try {
    receive(c, fd, dest);
  } catch (...) {
    ::close(fd);
    ::unlink(dest.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    ::unlink(dest.c_str());
    throw TaskFailure("INTERNAL", "cannot write " + dest + ": " + std::strerror(errno));
  }
  return dest;
}

std::string Fetcher::library(const std::string& pathOrUrl) {
  std::string local;
  if (isLocal(pathOrUrl, local)) return local;
  std::lock_guard<std::mutex> lock(libsMutex_);
  auto it = libs_.find(pathOrUrl);
  if (it == libs_.end()) it = libs_.emplace(pathOrUrl, fetch(pathOrUrl, 0, -1, "lib")).first;
  return it->second;
}

TaskInputs::~TaskInputs() {
  for (const std::string& p : fetched_) ::unlink(p.c_str());
}

std::string TaskInputs::local(const std::string& pathOrUrl) {
  std::string local;
  if (f_.isLocal(pathOrUrl, local)) return local;
  fetched_.push_back(f_.fetch(pathOrUrl, 0, -1, "fetch"));
  return fetched_.back();
}

std::vector<std::string> TaskInputs::local(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  out.reserve(paths.size());
  for (const std::string& p : paths) out.push_back(local(p));
  return out;
}

std::string TaskInputs::localSplit(const std::string& pathOrUrl, int64_t& offset, int64_t length) {
  std::string local;
  if (f_.isLocal(pathOrUrl, local)) return local;
  fetched_.push_back(f_.fetch(pathOrUrl, offset, std::max<int64_t>(0, length), "fetch"));
  offset = 0;
  return fetched_.back();
}

}  // namespace spindle
