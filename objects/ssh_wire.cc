#include "objects/ssh_wire.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "objects/error.h"

namespace kistore::ssh_wire {
namespace {

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

constexpr std::string_view kBlank = " \t\r\n";

}  // namespace

std::string base64_encode(std::string_view in, bool pad) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    std::uint32_t v = std::uint8_t(in[i]) << 16 | std::uint8_t(in[i + 1]) << 8 | std::uint8_t(in[i + 2]);
    out += kB64[v >> 18];
    out += kB64[v >> 12 & 63];
    out += kB64[v >> 6 & 63];
    out += kB64[v & 63];
  }
  if (std::size_t rest = in.size() - i; rest > 0) {
    std::uint32_t v = std::uint8_t(in[i]) << 16;
    if (rest == 2) v |= std::uint8_t(in[i + 1]) << 8;
    out += kB64[v >> 18];
    out += kB64[v >> 12 & 63];
    if (rest == 2) out += kB64[v >> 6 & 63];
    if (pad) out.append(rest == 1 ? "==" : "=");
  }
  return out;
}

// Canonical padded base64 only: length a multiple of 4, '=' only at the end,
// unused bits zero. Accepting other spellings would let one signature have
// several armored forms, which serves no one.

std::optional<std::string> base64_decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  if (!in.empty() && in.back() == '=') pad = in.size() >= 2 && in[in.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < in.size() - pad; ++i) {
    int v = b64_value(in[i]);
    if (v < 0) return std::nullopt;
    acc = acc << 6 | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>(acc >> bits & 0xff);
    }
  }
  if ((acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}


void put_u32(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v >> 24);
  out += static_cast<char>(v >> 16 & 0xff);
  out += static_cast<char>(v >> 8 & 0xff);
  out += static_cast<char>(v & 0xff);
}

void put_string(std::string& out, std::string_view s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}


std::string_view trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(kBlank);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kBlank) - b + 1);
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// A short, printable rendering of input for "found …" in messages.
std::string quoted(std::string_view s, std::size_t max) {
  std::string out = "\"";
  std::size_t n = 0;
  for (char c : s) {
    if (n++ == max) {
      out += "...";
      break;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (std::uint8_t(c) < 0x20 || std::uint8_t(c) == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : "";
      if (c != '\n' && c != '\r' && c != '\t') {
        out += "\\x";
        out += kHex[std::uint8_t(c) >> 4];
        out += kHex[std::uint8_t(c) & 15];
      }
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string first_line(std::string_view s) { return std::string(s.substr(0, s.find('\n'))); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string openssl_error() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no OpenSSL error recorded";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

void MdCtxFree::operator()(evp_md_ctx_st* c) const { EVP_MD_CTX_free(c); }

std::optional<std::string_view> ed25519_raw(std::string_view blob) {
  WireReader r(blob);
  auto type = r.string();
  auto raw = r.string();
  if (!type || *type != kEd25519 || !raw || raw->size() != kEd25519KeyBytes || !r.done())
    return std::nullopt;
  return raw;
}

std::string unsupported_type(std::string_view where, std::string_view type) {
  return std::string(where) + ": key type " + std::string(type) +
         " is not supported; kistore signs and verifies with ssh-ed25519 keys only "
         "(make one with ssh-keygen -t ed25519)";
}

// Builds a key from the "type base64 comment" fields of a text line. With
// `ed25519_only`, other types are refused; otherwise they are kept after a
// structural check (their blob names the same type), for allowed-signers
// files that also list other people's keys.
SshPublicKey key_from_fields(std::string_view type, std::string_view b64, std::string_view comment,
                             std::string_view where, bool ed25519_only) {
  if (ed25519_only && type != kEd25519) throw InvalidInput(unsupported_type(where, type));
  if (b64.empty())
    throw InvalidInput(std::string(where) + ": expected base64 key data after " + std::string(type) +
                       ", found nothing");
  auto blob = base64_decode(b64);
  if (!blob)
    throw InvalidInput(std::string(where) + ": expected base64 key data after " + std::string(type) +
                       ", found " + quoted(b64));
  WireReader r(*blob);
  auto inner = r.string();
  if (!inner || *inner != type)
    throw InvalidInput(std::string(where) + ": key data says its type is " +
                       (inner ? quoted(*inner) : std::string("(nothing)")) + ", the line says " +
                       std::string(type));
  if (type == kEd25519 && !ed25519_raw(*blob))
    throw InvalidInput(std::string(where) +
                       ": expected an Ed25519 key blob (string \"ssh-ed25519\", string of 32 bytes), "
                       "found " +
                       std::to_string(blob->size()) + " bytes that are not one");
  return SshPublicKey{std::string(type), std::move(*blob), std::string(comment)};
}

// Splits `s` at the first run of spaces/tabs: the token before, the rest after.
std::pair<std::string_view, std::string_view> next_token(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && !is_space(s[i])) ++i;
  std::string_view token = s.substr(0, i);
  while (i < s.size() && is_space(s[i])) ++i;
  return {token, s.substr(i)};
}

std::string signed_data(std::string_view ns, std::string_view reserved, std::string_view hash_name,
                        std::string_view hash) {
  std::string out(kSigMagic);
  put_string(out, ns);
  put_string(out, reserved);
  put_string(out, hash_name);
  put_string(out, hash);
  return out;
}

std::optional<std::string> digest(std::string_view hash_name, std::string_view payload) {
  const EVP_MD* md = hash_name == "sha512" ? EVP_sha512() : hash_name == "sha256" ? EVP_sha256() : nullptr;
  if (md == nullptr) return std::nullopt;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(payload.data(), payload.size(), out, &len, md, nullptr) != 1) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace kistore::ssh_wire
