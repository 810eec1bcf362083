// SHA-256 proof of work (the seed's Minebench), byte-compatible with bench/engine/workloads.py:
//   map("libminebench.so:MineBlock")  block number -> 76-byte header (Merkle root of 64 txs)
//   map("libminebench.so:MineNonce")  header -> (nonce, hex digest) of the first nonce whose
//                                     double SHA-256 has `minebench.bits` (default 14) leading
//                                     zero bits
//   map("libminebench.so:Sha256")     string or bytes -> hex SHA-256
#define OPENSSL_SUPPRESS_DEPRECATED  // SHA256_* (fast, no EVP lookup per call; midstates)
#include <openssl/sha.h>
#include <spindle/api.hpp>

#include <array>
#include <cstring>

using namespace spindle;

namespace {

using Digest = std::array<unsigned char, 32>;

Digest sha(const void* data, size_t n) {
  Digest d;
  SHA256_CTX c;
  SHA256_Init(&c);
  SHA256_Update(&c, data, n);
  SHA256_Final(d.data(), &c);
  return d;
}

Digest sha2(const void* data, size_t n) {
  Digest d = sha(data, n);
  return sha(d.data(), d.size());
}

std::string hex(const Digest& d) {
  static const char* x = "0123456789abcdef";
  std::string s;
  for (unsigned char c : d) {
    s += x[c >> 4];
    s += x[c & 15];
  }
  return s;
}

void putU32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; i++) s += char((v >> (8 * i)) & 0xFF);
}

bool leadingZeroBits(const Digest& d, int bits) {
  int i = 0;
  for (; bits >= 8; bits -= 8, i++)
    if (d[size_t(i)] != 0) return false;
  return bits == 0 || (d[size_t(i)] >> (8 - bits)) == 0;
}

}  // namespace

class MineBlock : public IFunction<int64_t, Bytes> {
 public:
  Bytes call(int64_t& block, Context&) override {
    std::vector<Digest> txs;
    for (int i = 0; i < 64; i++) {
      std::string t = "block " + std::to_string(block) + " tx " + std::to_string(i);
      txs.push_back(sha(t.data(), t.size()));
    }
    while (txs.size() > 1) {
      std::vector<Digest> next;
      for (size_t i = 0; i < txs.size(); i += 2) {
        unsigned char both[64];
        std::memcpy(both, txs[i].data(), 32);
        std::memcpy(both + 32, txs[i + 1].data(), 32);
        next.push_back(sha2(both, 64));
      }
      txs.swap(next);
    }
    std::string h;
    putU32(h, 2);
    h.append(32, '\0');
    h.append(reinterpret_cast<const char*>(txs[0].data()), 32);
    putU32(h, uint32_t(1700000000 + block));
    putU32(h, 0x1F00FFFFu);
    return Bytes{h};
  }
};

class MineNonce : public IFunction<Bytes, std::pair<int64_t, std::string>> {
 public:
  void before(Context& ctx) override { bits_ = std::stoi(ctx.prop("minebench.bits", "14")); }
  std::pair<int64_t, std::string> call(Bytes& header, Context&) override {
    // The header's whole 64-byte blocks do not change with the nonce: hash them once.
    const std::string& h = header.data;
    size_t fixed = h.size() / 64 * 64;
    SHA256_CTX mid;
    SHA256_Init(&mid);
    SHA256_Update(&mid, h.data(), fixed);
    std::string tail = h.substr(fixed) + std::string(4, '\0');
    char* nonceBytes = &tail[tail.size() - 4];
    Digest first, d;
    for (uint64_t nonce = 0; nonce <= 0xFFFFFFFFull; nonce++) {
      for (int i = 0; i < 4; i++) nonceBytes[i] = char((nonce >> (8 * i)) & 0xFF);
      SHA256_CTX c = mid;
      SHA256_Update(&c, tail.data(), tail.size());
      SHA256_Final(first.data(), &c);
      d = sha(first.data(), first.size());
      if (leadingZeroBits(d, bits_)) return {int64_t(nonce), hex(d)};
    }
    throw std::runtime_error("no nonce found");
  }

 private:
  int bits_ = 14;
};

class Sha256 : public IFunction<Value, std::string> {
 public:
  std::string call(Value& v, Context&) override {
    const std::string& s = v.isBytes() ? v.asBytes().data : v.asString();
    return hex(sha(s.data(), s.size()));
  }
};

SPINDLE_EXPORT(MineBlock)
SPINDLE_EXPORT(MineNonce)
SPINDLE_EXPORT(Sha256)
