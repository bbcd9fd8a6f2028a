#include "ember/device/env.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "ember/core/error.h"

namespace ember {
namespace {

// Digits of s from i on, as a uint64 (false on none, or on overflow).
bool digits(const std::string& s, size_t* i, uint64_t* out) {
  uint64_t v = 0;
  size_t start = *i;
  for (; *i < s.size() && std::isdigit(static_cast<unsigned char>(s[*i])); ++*i) {
    if (__builtin_mul_overflow(v, uint64_t(10), &v) || __builtin_add_overflow(v, uint64_t(s[*i] - '0'), &v))
      return false;
  }
  *out = v;
  return *i > start;
}

}  // namespace

std::optional<int64_t> env_int(const char* name, int64_t lo, int64_t hi) {
  const char* raw = std::getenv(name);
  if (!raw || !*raw) return std::nullopt;
  const std::string s = raw;
  size_t i = 0;
  bool neg = s[0] == '-';
  if (neg || s[0] == '+') ++i;
  uint64_t v = 0;
  bool ok = digits(s, &i, &v) && i == s.size() && v <= (neg ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX));
  int64_t x = ok ? (neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v)) : 0;
  EMBER_CHECK_VALUE(ok && x >= lo && x <= hi, name, "='", s, "': expected a whole number from ", lo, " to ", hi);
  return x;
}

std::optional<uint64_t> env_bytes(const char* name, uint64_t lo, uint64_t hi) {
  const char* raw = std::getenv(name);
  if (!raw || !*raw) return std::nullopt;
  const std::string s = raw;
  size_t i = 0;
  uint64_t v = 0;
  bool ok = digits(s, &i, &v);
  int shift = 0;
  if (ok && i < s.size()) {
    switch (std::toupper(static_cast<unsigned char>(s[i]))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      case 'B':
        shift = 0;
        break;
      default:
        ok = false;
    }
    if (ok) {
      const bool unit_b = std::toupper(static_cast<unsigned char>(s[i])) == 'B';
      ++i;
      if (!unit_b && i < s.size() && (s[i] == 'i' || s[i] == 'I')) ++i;
      if (!unit_b && i < s.size() && (s[i] == 'b' || s[i] == 'B')) ++i;
    }
  }
  ok = ok && i == s.size() && (shift == 0 || v <= (UINT64_MAX >> shift));
  const uint64_t bytes = ok ? v << shift : 0;
  EMBER_CHECK_VALUE(ok && bytes >= lo && bytes <= hi, name, "='", s, "': expected a byte count from ", lo, " to ", hi,
                    " (digits with an optional K, M, G or T suffix, powers of 1024)");
  return bytes;
}

}  // namespace ember
