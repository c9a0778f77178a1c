// Writing Json values (objects/json.h): the RFC 8785 canonical form (JCS)
// that digests are taken over, and the pretty form people read.
#include "objects/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace kistore {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

bool member_less(const Json::Member* a, const Json::Member* b) {
  return canonical_name_less(a->first, b->first);
}

// Calls f(member) in canonical order. Documents usually arrive sorted already
// (canonical bytes from the store), so that case costs one pass and nothing
// else; otherwise pointers are sorted in `scratch`, a stack shared by all
// levels of one write so that nested objects allocate nothing new.
template <typename F>
void for_each_sorted(const Json::Object& members, std::vector<const Json::Member*>& scratch,
                     F&& f) {
  bool sorted = true;
  for (std::size_t i = 1; i < members.size() && sorted; ++i) {
    sorted = canonical_name_less(members[i - 1].first, members[i].first);
  }
  if (sorted) {
    for (const Json::Member& m : members) f(m);
    return;
  }
  const std::size_t base = scratch.size();
  for (const Json::Member& m : members) scratch.push_back(&m);
  std::sort(scratch.begin() + static_cast<std::ptrdiff_t>(base), scratch.end(), member_less);
  // By index: nested calls push onto scratch and may reallocate it.
  for (std::size_t i = base; i < base + members.size(); ++i) f(*scratch[i]);
  scratch.resize(base);
}

void append_number(double value, std::string& out) {
  if (!std::isfinite(value)) throw std::logic_error("JSON has no form for NaN or infinity");
  if (value == 0) {  // -0 included
    out += '0';
    return;
  }
  // Shortest round-trip digits (and the closest of several) are exactly what
  // ECMAScript's Number::toString needs; only the layout differs.
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  if (ec != std::errc()) throw std::logic_error("std::to_chars failed on a finite double");
  const char* p = buf;
  if (*p == '-') {
    out += '-';
    ++p;
  }
  char digits[20];
  int k = 0;
  for (; p != end && *p != 'e'; ++p) {
    if (*p != '.') digits[k++] = *p;
  }
  int exponent = 0;
  std::from_chars(p + 1 + (p[1] == '+'), end, exponent);
  const int n = exponent + 1;  // position of the decimal point relative to the digits
  if (k <= n && n <= 21) {
    out.append(digits, static_cast<std::size_t>(k));
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, static_cast<std::size_t>(n));
    out += '.';
    out.append(digits + n, static_cast<std::size_t>(k - n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out.append(digits, static_cast<std::size_t>(k));
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits + 1, static_cast<std::size_t>(k - 1));
    }
    out += 'e';
    out += n - 1 < 0 ? '-' : '+';
    char exp[8];
    const auto r = std::to_chars(exp, exp + sizeof exp, std::abs(n - 1));
    out.append(exp, r.ptr);
  }
}

// The members for_each_sorted puts in order, one stack per thread: a writer
// made per document would allocate it anew for each (importers write
// several documents a run). Each use takes the entries above its own base,
// so nested and successive writers share it safely.
std::vector<const Json::Member*>& sort_scratch() {
  thread_local std::vector<const Json::Member*> scratch;
  return scratch;
}

class CanonicalWriter {
 public:
  explicit CanonicalWriter(std::string& out) : out_(out), scratch_(sort_scratch()) {}

  void value(const Json& v) {
    switch (v.type()) {
      case Json::Type::kNull: out_ += "null"; break;
      case Json::Type::kBool: out_ += v.as_bool() ? "true" : "false"; break;
      case Json::Type::kNumber: append_number(v.as_number(), out_); break;
      case Json::Type::kString: write_json_string(v.as_string(), out_); break;
      case Json::Type::kArray: {
        out_ += '[';
        bool first = true;
        for (const Json& e : v.as_array()) {
          if (!first) out_ += ',';
          first = false;
          value(e);
        }
        out_ += ']';
        break;
      }
      case Json::Type::kObject: {
        out_ += '{';
        bool first = true;
        for_each_sorted(v.as_object(), scratch_, [&](const Json::Member& m) {
          if (!first) out_ += ',';
          first = false;
          write_json_string(m.first, out_);
          out_ += ':';
          value(m.second);
        });
        out_ += '}';
        break;
      }
    }
  }

 private:
  std::string& out_;
  std::vector<const Json::Member*>& scratch_;
};

class PrettyWriter {
 public:
  explicit PrettyWriter(std::string& out) : out_(out) {}

  void value(const Json& v, std::size_t indent) {
    if (v.is_array() && !v.as_array().empty()) {
      out_ += "[\n";
      const Json::Array& elements = v.as_array();
      for (std::size_t i = 0; i < elements.size(); ++i) {
        out_.append(indent + 2, ' ');
        value(elements[i], indent + 2);
        out_ += i + 1 < elements.size() ? ",\n" : "\n";
      }
      out_.append(indent, ' ');
      out_ += ']';
    } else if (v.is_object() && !v.as_object().empty()) {
      out_ += "{\n";
      std::size_t left = v.as_object().size();
      for_each_sorted(v.as_object(), scratch_, [&](const Json::Member& m) {
        out_.append(indent + 2, ' ');
        write_json_string(m.first, out_);
        out_ += ": ";
        value(m.second, indent + 2);
        out_ += --left > 0 ? ",\n" : "\n";
      });
      out_.append(indent, ' ');
      out_ += '}';
    } else {
      CanonicalWriter(out_).value(v);
    }
  }

 private:
  std::string& out_;
  std::vector<const Json::Member*> scratch_;
};

}  // namespace

void write_canonical(const Json& value, std::string& out) { CanonicalWriter(out).value(value); }

std::string canonical(const Json& value) {
  // Written into a buffer kept per thread, then copied out at its size: grown
  // by doubling from empty, a document's text cost a handful of allocations
  // and copies. A buffer grown past kKept by one large value is let go.
  constexpr std::size_t kKept = 1 << 20;
  thread_local std::string scratch;
  scratch.clear();
  write_canonical(value, scratch);
  std::string out(scratch);
  if (scratch.capacity() > kKept) std::string().swap(scratch);
  return out;
}

// RFC 8785 §3.2.3 orders names by UTF-16 code units. UTF-8 byte order is code
// point order, which agrees with UTF-16 order except that a character above
// U+FFFF (UTF-16: a surrogate, D800-DBFF) sorts before one in U+E000-U+FFFF. At
// the first differing byte, two lead bytes (0xF0-0xF4 vs 0xEE-0xEF) are the
// only case where the byte order must be overruled.
bool canonical_name_less(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size();
  const auto x = static_cast<unsigned char>(a[i]);
  const auto y = static_cast<unsigned char>(b[i]);
  if (x >= 0xF0 && (y == 0xEE || y == 0xEF)) return true;
  if (y >= 0xF0 && (x == 0xEE || x == 0xEF)) return false;
  return x < y;
}

std::string format_number(double value) {
  std::string out;
  append_number(value, out);
  return out;
}

std::string pretty(const Json& value) {
  std::string out;
  PrettyWriter(out).value(value, 0);
  return out;
}

void write_json_string(std::string_view s, std::string& out) {
  out += '"';
  const char* run = s.data();
  const char* end = s.data() + s.size();
  for (const char* p = run; p != end; ++p) {
    // Most strings need no escape at all: skip eight bytes at a time while none
    // of them is below 0x20, '"' or '\\' (exact SWAR byte tests).
    while (end - p >= 8) {
      std::uint64_t x;
      std::memcpy(&x, p, 8);
      constexpr std::uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080;
      const std::uint64_t quote = x ^ (kOnes * '"'), backslash = x ^ (kOnes * '\\');
      const std::uint64_t below_space = (x - kOnes * 0x20) & ~x;
      const std::uint64_t is_quote = (quote - kOnes) & ~quote;
      const std::uint64_t is_backslash = (backslash - kOnes) & ~backslash;
      if ((below_space | is_quote | is_backslash) & kHigh) break;
      p += 8;
    }
    if (p == end) break;
    const auto c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(run, p);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        out += "\\u00";
        out += kHexDigits[c >> 4];
        out += kHexDigits[c & 15];
    }
    run = p + 1;
  }
  out.append(run, end);
  out += '"';
}

std::string quoted_excerpt(std::string_view s, std::size_t max) {
  std::string out;
  if (s.size() <= max) {
    write_json_string(s, out);
    return out;
  }
  while (max > 0 && (static_cast<unsigned char>(s[max]) & 0xC0) == 0x80) --max;  // a UTF-8 continuation byte
  write_json_string(s.substr(0, max), out);
  out.insert(out.size() - 1, "...");
  return out;
}

}  // namespace kistore
