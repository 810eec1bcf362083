#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "errors.hpp"
#include "text.hpp"

namespace spindle {

namespace {

// Length of the valid UTF-8 sequence at s[0..n), or 0 with `bad` = bytes of the maximal
// invalid subpart (at least 1).
size_t utf8Seq(const unsigned char* s, size_t n, size_t& bad) {
  unsigned char c = s[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c < 0x80) return 1;
  // One line per lead-byte range, as in the UTF-8 table of RFC 3629.
  // clang-format off
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c == 0xE0) { len = 3; lo = 0xA0; }
  else if (c == 0xED) { len = 3; hi = 0x9F; }
  else if (c >= 0xE1 && c <= 0xEF) len = 3;
  else if (c == 0xF0) { len = 4; lo = 0x90; }
  else if (c == 0xF4) { len = 4; hi = 0x8F; }
  else if (c >= 0xF1 && c <= 0xF3) len = 4;
  else { bad = 1; return 0; }
  // clang-format on
  for (size_t i = 1; i < len; i++) {
    unsigned char lo_i = i == 1 ? lo : 0x80, hi_i = i == 1 ? hi : 0xBF;
    if (i >= n || s[i] < lo_i || s[i] > hi_i) {
      bad = i;
      return 0;
    }
  }
  return len;
}

}  // namespace

std::string utf8Repaired(const char* data, size_t n) {
  const unsigned char* s = reinterpret_cast<const unsigned char*>(data);
  size_t i = 0;
  for (uint64_t w; i + 8 <= n; i += 8) {  // ASCII fast path, 8 bytes at a time
    std::memcpy(&w, data + i, 8);
    if (w & 0x8080808080808080ull) break;
  }
  while (i < n && s[i] < 0x80) i++;
  if (i == n) return std::string(data, n);
  std::string out(data, i);
  while (i < n) {
    size_t bad = 0;
    size_t len = utf8Seq(s + i, n - i, bad);
    if (len) {
      out.append(data + i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      i += bad;
    }
  }
  return out;
}

void readTextSplit(const std::string& path, int64_t offset, int64_t length,
                   const std::function<bool(std::string&&)>& emit) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw badData("cannot open text file " + path + ": " + std::strerror(errno));
  struct stat st;
  fstat(fd, &st);
  size_t size = size_t(st.st_size);
  if (size == 0) {
    ::close(fd);
    return;
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) throw badData("cannot map text file " + path);
  madvise(map, size, MADV_SEQUENTIAL);
  const char* base = static_cast<const char*>(map);
  size_t pos = 0;
  if (offset > 0) {
    size_t from = size_t(offset - 1);
    if (from >= size) pos = size;
    else {
      const void* nl = std::memchr(base + from, '\n', size - from);
      pos = nl ? size_t(static_cast<const char*>(nl) - base) + 1 : size;
    }
  }
  size_t stop = size_t(std::min<int64_t>(int64_t(size), offset + length));
  try {
    while (pos < stop) {  // each line that begins before the end of the split
      const void* nl = std::memchr(base + pos, '\n', size - pos);
      size_t eol = nl ? size_t(static_cast<const char*>(nl) - base) : size;
      size_t len = eol - pos;
      if (!nl && len == 0) break;
      if (len > 0 && base[pos + len - 1] == '\r') len--;
      if (!emit(utf8Repaired(base + pos, len))) break;
      pos = eol + 1;
    }
  } catch (...) {
    munmap(map, size);
    throw;
  }
  munmap(map, size);
}

}  // namespace spindle
