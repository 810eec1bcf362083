#include <charconv>
#include <cmath>
#include <cstdio>

#include "text.hpp"

namespace spindle {

namespace {

void appendJsonString(const std::string& s, std::string& out) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(char(c));
        }
    }
  }
  out.push_back('"');
}

void appendBase64(const std::string& s, std::string& out) {
  static const char* A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0, n = s.size();
  auto b = [&](size_t k) { return uint32_t(uint8_t(s[k])); };
  for (; i + 3 <= n; i += 3) {
    uint32_t x = b(i) << 16 | b(i + 1) << 8 | b(i + 2);
    out += A[x >> 18 & 63];
    out += A[x >> 12 & 63];
    out += A[x >> 6 & 63];
    out += A[x & 63];
  }
  if (n - i == 1) {
    uint32_t x = b(i) << 16;
    out += A[x >> 18 & 63];
    out += A[x >> 12 & 63];
    out += "==";
  } else if (n - i == 2) {
    uint32_t x = b(i) << 16 | b(i + 1) << 8;
    out += A[x >> 18 & 63];
    out += A[x >> 12 & 63];
    out += A[x >> 6 & 63];
    out += '=';
  }
}

}  // namespace

std::string floatRepr(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e[+-]XX
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  bool neg = sci[0] == '-';
  size_t epos = sci.find('e');
  std::string mant = sci.substr(neg ? 1 : 0, epos - (neg ? 1 : 0));
  int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  int decpt = exp + 1;  // position of the decimal point relative to the digits
  std::string out = neg ? "-" : "";
  if (decpt > -4 && decpt <= 16) {  // Python repr: fixed notation
    if (decpt <= 0) {
      out += "0." + std::string(size_t(-decpt), '0') + digits;
    } else if (size_t(decpt) >= digits.size()) {
      out += digits + std::string(size_t(decpt) - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, size_t(decpt)) + "." + digits.substr(size_t(decpt));
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += e;
  }
  return out;
}

void appendJson(const Value& v, std::string& out) {
  using T = Value::Type;
  switch (v.type()) {
    case T::None: out += "null"; break;
    case T::Bool: out += v.asBool() ? "true" : "false"; break;
    case T::Int: out += std::to_string(v.asInt()); break;
    case T::Float: out += floatRepr(v.asFloat()); break;
    case T::String: appendJsonString(v.asString(), out); break;
    case T::Bytes:
      out.push_back('"');
      appendBase64(v.asBytes().data, out);
      out.push_back('"');
      break;
    case T::Pair:
      out.push_back('[');
      appendJson(v.first(), out);
      out.push_back(',');
      appendJson(v.second(), out);
      out.push_back(']');
      break;
    case T::List: {
      out.push_back('[');
      bool first = true;
      for (const Value& x : v.asList()) {
        if (!first) out.push_back(',');
        first = false;
        appendJson(x, out);
      }
      out.push_back(']');
      break;
    }
    case T::Map: {
      bool strKeys = true;
      for (const auto& kv : v.asMap()) strKeys = strKeys && kv.first.isString();
      out.push_back(strKeys ? '{' : '[');
      bool first = true;
      for (const auto& kv : v.asMap()) {
        if (!first) out.push_back(',');
        first = false;
        if (strKeys) {
          appendJsonString(kv.first.asString(), out);
          out.push_back(':');
          appendJson(kv.second, out);
        } else {
          out.push_back('[');
          appendJson(kv.first, out);
          out.push_back(',');
          appendJson(kv.second, out);
          out.push_back(']');
        }
      }
      out.push_back(strKeys ? '}' : ']');
      break;
    }
  }
}

}  // namespace spindle
