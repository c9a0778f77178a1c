#include "objects/ssh_signature.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>

#include "objects/error.h"

namespace kistore {
namespace {

constexpr std::string_view kEd25519 = "ssh-ed25519";
constexpr std::size_t kEd25519KeyBytes = 32;
constexpr std::size_t kEd25519SignatureBytes = 64;

constexpr std::string_view kSigBegin = "-----BEGIN SSH SIGNATURE-----";
constexpr std::string_view kSigEnd = "-----END SSH SIGNATURE-----";
constexpr std::string_view kSigMagic = "SSHSIG";
constexpr std::uint32_t kSigVersion = 1;
// ssh-keygen wraps its armor at 70 columns (PROTOCOL.sshsig suggests 76, but
// byte-identical output with ssh-keygen is what lets tests compare bytes).
constexpr std::size_t kSigWrap = 70;

constexpr std::string_view kKeyBegin = "-----BEGIN OPENSSH PRIVATE KEY-----";
constexpr std::string_view kKeyEnd = "-----END OPENSSH PRIVATE KEY-----";
constexpr std::string_view kKeyMagic{"openssh-key-v1\0", 15};
// Unencrypted keys are padded to the "none" cipher's block size; ssh-keygen
// refuses a private section of any other length, and so do we.
constexpr std::size_t kKeyBlockSize = 8;
// A private key file is a few hundred bytes; the cap keeps load() from
// reading a device or a huge file that was passed by mistake.
constexpr std::size_t kMaxKeyFileBytes = 64 * 1024;

// ---- base64 (RFC 4648, standard alphabet) --------------------------------

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

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

// ---- SSH wire encoding (RFC 4251 §5) -------------------------------------

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

// Reads fields from a wire blob. A failed read returns nullopt and leaves
// the position where it was, so callers can say which field was cut short.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}

  std::optional<std::string_view> bytes(std::size_t n) {
    if (data_.size() - pos_ < n) return std::nullopt;
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  std::optional<std::uint32_t> u32() {
    auto b = bytes(4);
    if (!b) return std::nullopt;
    return std::uint32_t(std::uint8_t((*b)[0])) << 24 | std::uint32_t(std::uint8_t((*b)[1])) << 16 |
           std::uint32_t(std::uint8_t((*b)[2])) << 8 | std::uint32_t(std::uint8_t((*b)[3]));
  }
  std::optional<std::string_view> string() {
    std::size_t start = pos_;
    auto n = u32();
    if (!n) return std::nullopt;
    auto s = bytes(*n);
    if (!s) pos_ = start;
    return s;
  }
  std::string_view rest() const { return data_.substr(pos_); }
  bool done() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

// ---- small text helpers ---------------------------------------------------

constexpr std::string_view kBlank = " \t\r\n";

std::string_view trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(kBlank);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kBlank) - b + 1);
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// A short, printable rendering of input for "found …" in messages.
std::string quoted(std::string_view s, std::size_t max = 48) {
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

// ---- keys -------------------------------------------------------------------

// Overwrites a buffer that held key material when the scope ends, however
// it ends (OPENSSL_cleanse, because a plain memset may be optimised away).
struct WipeOnExit {
  std::string& bytes;
  ~WipeOnExit() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

// The 32 key bytes of an Ed25519 public key blob, or nullopt when `blob` is
// not exactly string "ssh-ed25519", string 32 bytes.
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

}  // namespace

// ---- SshPublicKey -------------------------------------------------------------

std::string SshPublicKey::to_text() const {
  std::string out = type + " " + base64_encode(blob, true);
  if (!comment.empty()) out += " " + comment;
  return out;
}

std::string SshPublicKey::fingerprint() const {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(blob.data()), blob.size(), digest);
  return "SHA256:" + base64_encode(
                         std::string_view(reinterpret_cast<const char*>(digest), sizeof digest), false);
}

SshPublicKey parse_public_key(std::string_view text, std::string_view source) {
  std::string_view line = trim(text);
  if (line.find('\n') != std::string_view::npos)
    throw InvalidInput(std::string(source) +
                       ": expected one public key line (ssh-ed25519 AAAA... comment), found several "
                       "lines starting " +
                       quoted(first_line(line)));
  auto [type, after_type] = next_token(line);
  auto [b64, comment] = next_token(after_type);
  if (type.starts_with("-----BEGIN") || b64.empty())
    throw InvalidInput(std::string(source) +
                       ": expected a public key line (ssh-ed25519 AAAA... comment), found " +
                       quoted(line));
  return key_from_fields(type, b64, trim(comment), source, /*ed25519_only=*/true);
}

// ---- SshPrivateKey ------------------------------------------------------------

void SshPrivateKey::PkeyFree::operator()(evp_pkey_st* key) const { EVP_PKEY_free(key); }

SshPrivateKey::SshPrivateKey(std::unique_ptr<evp_pkey_st, PkeyFree> key, SshPublicKey public_key)
    : key_(std::move(key)), public_key_(std::move(public_key)) {}
SshPrivateKey::SshPrivateKey(SshPrivateKey&&) noexcept = default;
SshPrivateKey& SshPrivateKey::operator=(SshPrivateKey&&) noexcept = default;
SshPrivateKey::~SshPrivateKey() = default;

SshPrivateKey SshPrivateKey::parse(std::string_view pem_text, std::string_view source) {
  const std::string src(source);
  auto bad = [&](const std::string& what) { return InvalidInput(src + ": " + what); };

  std::string_view text = trim(pem_text);
  if (!text.starts_with(kKeyBegin)) {
    std::string found = quoted(first_line(text));
    if (text.starts_with("ssh-") || text.starts_with("ecdsa-") || text.starts_with("sk-"))
      found += " (a public key; pass the private key file, without .pub)";
    throw bad("expected an OpenSSH private key (" + std::string(kKeyBegin) + "), found " + found);
  }
  if (text.size() < kKeyBegin.size() + kKeyEnd.size() || !text.ends_with(kKeyEnd))
    throw bad("expected the private key to end with " + std::string(kKeyEnd) + ", found " +
              quoted(text.substr(text.rfind('\n') + 1)));
  std::string_view body = text.substr(kKeyBegin.size(), text.size() - kKeyBegin.size() - kKeyEnd.size());
  // Key files get edited and copied around; unlike signatures, whitespace
  // inside the armor (CRLF line ends, indentation) carries no meaning here.
  std::string b64;
  for (char c : body)
    if (c != '\n' && c != '\r' && !is_space(c)) b64 += c;

  auto decoded_opt = base64_decode(b64);
  OPENSSL_cleanse(b64.data(), b64.size());
  if (!decoded_opt) throw bad("the text between the armor lines is not valid base64");
  std::string decoded = std::move(*decoded_opt);
  // The decoded bytes hold the private key in the clear: wipe them on every
  // way out rather than leave them in freed heap memory.
  const WipeOnExit wipe{decoded};

  WireReader r(decoded);
  if (r.bytes(kKeyMagic.size()) != kKeyMagic)
    throw bad("expected the magic \"openssh-key-v1\" at the start of the key data, found something else");
  auto cipher = r.string();
  auto kdf = r.string();
  auto kdf_options = r.string();
  auto nkeys = r.u32();
  if (!cipher || !kdf || !kdf_options || !nkeys) throw bad("the key data is cut short in its header");
  if (*cipher != "none" || *kdf != "none")
    throw bad("encrypted private keys are not supported (" +
              (*cipher != "none" ? "cipher " + std::string(*cipher) : "kdf " + std::string(*kdf)) +
              "); decrypt a copy with ssh-keygen -p or use an unencrypted key");
  if (*nkeys != 1) throw bad("expected one key in the file, found " + std::to_string(*nkeys));
  auto public_blob = r.string();
  auto private_section = r.string();
  if (!public_blob || !private_section) throw bad("the key data is cut short");
  if (!r.done())
    throw bad("expected nothing after the private section, found " + std::to_string(r.rest().size()) +
              " more bytes");

  WireReader pub(*public_blob);
  auto type = pub.string();
  if (!type) throw bad("the public key in the file is cut short");
  if (*type != kEd25519) throw InvalidInput(unsupported_type(src, *type));
  auto raw_public = ed25519_raw(*public_blob);
  if (!raw_public) throw bad("the public key in the file is not a well-formed Ed25519 key");

  if (private_section->size() % kKeyBlockSize != 0)
    throw bad("expected the private section to be a multiple of " + std::to_string(kKeyBlockSize) +
              " bytes, found " + std::to_string(private_section->size()));
  WireReader priv(*private_section);
  auto check1 = priv.u32();
  auto check2 = priv.u32();
  if (!check1 || !check2 || *check1 != *check2)
    throw bad("the private section's check words differ: the file is damaged");
  auto priv_type = priv.string();
  auto priv_public = priv.string();
  auto secret = priv.string();  // seed (32) followed by the public key (32)
  auto comment = priv.string();
  if (!priv_type || !priv_public || !secret || !comment) throw bad("the private section is cut short");
  if (*priv_type != kEd25519)
    throw bad("expected the private section to hold an ssh-ed25519 key, found " + quoted(*priv_type));
  if (*priv_public != *raw_public)
    throw bad("the private section's public key differs from the file's public key");
  if (secret->size() != 2 * kEd25519KeyBytes || secret->substr(kEd25519KeyBytes) != *raw_public)
    throw bad("expected a 64-byte Ed25519 secret (seed then public key), found " +
              std::to_string(secret->size()) + " bytes that are not one");
  std::string_view padding = priv.rest();
  for (std::size_t i = 0; i < padding.size(); ++i)
    if (std::uint8_t(padding[i]) != (i + 1) % 256)
      throw bad("expected padding bytes 1, 2, 3, ... after the key comment, found byte " +
                std::to_string(std::uint8_t(padding[i])) + " at position " + std::to_string(i + 1));

  PkeyPtr key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                           reinterpret_cast<const unsigned char*>(secret->data()),
                                           kEd25519KeyBytes));
  if (!key) throw bad("OpenSSL refused the Ed25519 seed: " + openssl_error());
  // The file stores the public key next to the seed; a key whose seed does
  // not give that public key would make signatures nobody can verify.
  unsigned char derived[kEd25519KeyBytes];
  std::size_t derived_len = sizeof derived;
  if (EVP_PKEY_get_raw_public_key(key.get(), derived, &derived_len) != 1 ||
      derived_len != kEd25519KeyBytes ||
      std::string_view(reinterpret_cast<const char*>(derived), derived_len) != *raw_public)
    throw bad("the public key in the file does not belong to its private key: the file is damaged");

  SshPublicKey public_key{std::string(kEd25519), std::string(*public_blob), std::string(*comment)};
  return SshPrivateKey(std::unique_ptr<evp_pkey_st, PkeyFree>(key.release()), std::move(public_key));
}

SshPrivateKey SshPrivateKey::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(path + ": cannot open the private key file: " + std::strerror(errno));
  std::string text(kMaxKeyFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw IOError(path + ": cannot read the private key file: " + std::strerror(errno));
  text.resize(static_cast<std::size_t>(in.gcount()));
  const WipeOnExit wipe{text};
  if (text.size() > kMaxKeyFileBytes)
    throw InvalidInput(path + ": expected an OpenSSH private key of a few hundred bytes, found more than " +
                       std::to_string(kMaxKeyFileBytes) + " bytes");
  return parse(text, path);
}

namespace {

// The bytes an SSHSIG signature covers (PROTOCOL.sshsig §3): no version
// field here, unlike the blob.
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

}  // namespace

std::string SshPrivateKey::sign(std::string_view payload, std::string_view ns) const {
  if (ns.empty()) throw InvalidInput("SSH signature namespace must not be empty (PROTOCOL.sshsig)");
  auto hash = digest("sha512", payload);
  if (!hash) throw IOError("OpenSSL: sha512 failed: " + openssl_error());
  const std::string tbs = signed_data(ns, "", "sha512", *hash);

  MdCtxPtr ctx(EVP_MD_CTX_new());
  unsigned char sig[kEd25519SignatureBytes];
  std::size_t sig_len = sizeof sig;
  // Ed25519 hashes internally: the digest argument must be NULL.
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig, &sig_len, reinterpret_cast<const unsigned char*>(tbs.data()),
                     tbs.size()) != 1 ||
      sig_len != kEd25519SignatureBytes)
    throw IOError("OpenSSL: Ed25519 signing failed: " + openssl_error());

  std::string sig_blob;
  put_string(sig_blob, kEd25519);
  put_string(sig_blob, std::string_view(reinterpret_cast<const char*>(sig), sig_len));

  std::string blob(kSigMagic);
  put_u32(blob, kSigVersion);
  put_string(blob, public_key_.blob);
  put_string(blob, ns);
  put_string(blob, "");  // reserved
  put_string(blob, "sha512");
  put_string(blob, sig_blob);

  const std::string b64 = base64_encode(blob, true);
  std::string out = std::string(kSigBegin) + "\n";
  for (std::size_t i = 0; i < b64.size(); i += kSigWrap) {
    out.append(b64, i, kSigWrap);
    out += '\n';
  }
  return out + std::string(kSigEnd) + "\n";
}

// ---- verify_signature -----------------------------------------------------------

SshSignatureCheck verify_signature(std::string_view armored, std::string_view payload, std::string_view ns) {
  SshSignatureCheck check;
  auto invalid = [&](std::string detail) {
    check.valid = false;
    check.detail = std::move(detail);
    return check;
  };

  if (!armored.starts_with(kSigBegin) || armored.substr(kSigBegin.size(), 1) != "\n")
    return invalid("expected the armor line " + std::string(kSigBegin) + ", found " +
                   quoted(first_line(armored)));
  std::string_view body = armored.substr(kSigBegin.size() + 1);
  if (body.ends_with('\n')) body.remove_suffix(1);
  if (!body.ends_with(kSigEnd))
    return invalid("expected the signature to end with the line " + std::string(kSigEnd) + ", found " +
                   quoted(body.substr(body.rfind('\n') + 1)));
  body.remove_suffix(kSigEnd.size());
  if (body.empty()) return invalid("expected base64 between the armor lines, found nothing");
  if (!body.ends_with('\n'))
    return invalid("expected " + std::string(kSigEnd) + " at the start of a line, found it after " +
                   quoted(body.substr(body.rfind('\n') + 1)));
  body.remove_suffix(1);
  const std::string b64_chars = std::string(kB64) + "=";
  std::string b64;
  std::size_t line_no = 2;  // the BEGIN line is line 1
  for (;;) {
    std::size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    if (line.empty())
      return invalid("expected base64 on line " + std::to_string(line_no) +
                     " of the signature, found an empty line");
    if (line.find_first_not_of(b64_chars) != std::string_view::npos)
      return invalid("expected base64 on line " + std::to_string(line_no) + " of the signature, found " +
                     quoted(line));
    b64.append(line);
    if (nl == std::string_view::npos) break;
    body.remove_prefix(nl + 1);
    ++line_no;
  }
  auto blob = base64_decode(b64);
  if (!blob) return invalid("the text between the armor lines is not canonical base64");

  WireReader r(*blob);
  if (r.bytes(kSigMagic.size()) != kSigMagic)
    return invalid("expected the magic \"SSHSIG\" at the start of the signature blob, found " +
                   quoted(blob->substr(0, kSigMagic.size())));
  auto version = r.u32();
  if (!version) return invalid("the signature blob is cut short before its version");
  if (*version != kSigVersion)
    return invalid("expected SSHSIG version 1, found version " + std::to_string(*version));
  auto public_blob = r.string();
  if (!public_blob) return invalid("the signature blob is cut short in its public key");
  WireReader pub(*public_blob);
  auto key_type = pub.string();
  if (!key_type) return invalid("the signature's public key is cut short");
  check.signer.type = std::string(*key_type);
  check.signer.blob = std::string(*public_blob);
  if (*key_type != kEd25519)
    return invalid("signed with a " + quoted(*key_type) + " key; kistore verifies ssh-ed25519 only");
  auto raw_public = ed25519_raw(*public_blob);
  if (!raw_public) return invalid("the signature's ssh-ed25519 public key is not 32 bytes");

  auto sig_ns = r.string();
  auto reserved = r.string();
  auto hash_name = r.string();
  auto sig_blob = r.string();
  if (!sig_ns || !reserved || !hash_name || !sig_blob)
    return invalid("the signature blob is cut short after its public key");
  if (!r.done())
    return invalid("expected nothing after the signature field, found " + std::to_string(r.rest().size()) +
                   " more bytes");
  if (*sig_ns != ns)
    return invalid("namespace is " + quoted(*sig_ns) + ", expected " + quoted(ns));
  if (*hash_name != "sha512" && *hash_name != "sha256")
    return invalid("expected hash \"sha512\" or \"sha256\", found " + quoted(*hash_name));

  WireReader s(*sig_blob);
  auto sig_type = s.string();
  auto sig = s.string();
  if (!sig_type || !sig || !s.done())
    return invalid("the signature field is not string type, string signature");
  if (*sig_type != kEd25519)
    return invalid("expected an ssh-ed25519 signature, found " + quoted(*sig_type));
  if (sig->size() != kEd25519SignatureBytes)
    return invalid("expected a 64-byte Ed25519 signature, found " + std::to_string(sig->size()) + " bytes");

  auto hash = digest(*hash_name, payload);
  if (!hash) return invalid("OpenSSL could not hash the payload: " + openssl_error());
  const std::string tbs = signed_data(*sig_ns, *reserved, *hash_name, *hash);

  PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                          reinterpret_cast<const unsigned char*>(raw_public->data()),
                                          raw_public->size()));
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!key || !ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1)
    return invalid("OpenSSL could not load the signature's Ed25519 key: " + openssl_error());
  int ok = EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()), sig->size(),
                            reinterpret_cast<const unsigned char*>(tbs.data()), tbs.size());
  if (ok != 1) {
    ERR_clear_error();  // a bad signature is an answer, not an error to keep around
    return invalid("Ed25519 signature by " + check.signer.fingerprint() +
                   " does not match the payload (the payload or the signature was changed)");
  }
  check.valid = true;
  check.detail = "good " + quoted(ns) + " signature with ED25519 key " + check.signer.fingerprint();
  return check;
}

// ---- allowed signers ----------------------------------------------------------------

namespace {

// The options field, checked as ssh-keygen checks it. `namespaces` gets the
// namespaces="…" list when there is one. Returns an error text (empty when
// the options are fine), phrased to follow "<source>:<line>: ".
std::string check_options(std::string_view options, std::optional<std::string>& namespaces) {
  namespaces.reset();
  std::size_t i = 0;
  while (true) {
    std::size_t k = i;
    while (k < options.size() && options[k] != ',' && options[k] != '=') ++k;
    const std::string keyword = lower(options.substr(i, k - i));
    const bool has_value = k < options.size() && options[k] == '=';
    if (keyword == "cert-authority" && !has_value)
      return "option cert-authority is not supported: kistore verifies plain keys, not certificates; "
             "list the signers' own keys instead";
    if ((keyword == "valid-after" || keyword == "valid-before") && has_value)
      return "option " + keyword +
             " is not supported: kistore does not check key validity times, and ignoring the option "
             "would accept keys git rejects; remove it or leave this key out";
    if (keyword != "namespaces" || !has_value)
      return "expected an option namespaces=\"...\", found " + quoted(options.substr(i));
    if (namespaces) return "expected one namespaces option, found several";
    i = k + 1;
    if (i >= options.size() || options[i] != '"')
      return "expected a double-quoted list after namespaces=, found " + quoted(options.substr(i));
    std::size_t close = options.find('"', i + 1);
    if (close == std::string_view::npos) return "the namespaces list has no closing '\"'";
    namespaces = std::string(options.substr(i + 1, close - i - 1));
    i = close + 1;
    if (i == options.size()) return {};
    if (options[i] != ',')
      return "expected ',' or the end of the options after the namespaces list, found " +
             quoted(options.substr(i));
    ++i;
    if (i == options.size()) return "expected another option after the last ',', found nothing";
  }
}

// ssh_config(5) PATTERNS: '*' matches any run of characters, '?' any one.
bool match_pattern(std::string_view s, std::string_view p) {
  std::size_t si = 0, pi = 0, star = std::string_view::npos, resume = 0;
  while (si < s.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
      ++si, ++pi;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      resume = si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++resume;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

// A comma-separated pattern list: any match of a '!' pattern refuses, else
// any match of a plain pattern accepts.
bool match_pattern_list(std::string_view s, std::string_view list) {
  bool matched = false;
  while (true) {
    std::size_t comma = list.find(',');
    std::string_view p = list.substr(0, comma);
    bool negated = p.starts_with('!');
    if (negated) p.remove_prefix(1);
    if (match_pattern(s, p)) {
      if (negated) return false;
      matched = true;
    }
    if (comma == std::string_view::npos) return matched;
    list.remove_prefix(comma + 1);
  }
}

// Option keywords never start so; key types always do (ssh-ed25519,
// ssh-rsa, ecdsa-sha2-nistp256, sk-ssh-ed25519@openssh.com, certificates).
bool looks_like_key_type(std::string_view field) {
  return field.starts_with("ssh-") || field.starts_with("ecdsa-") || field.starts_with("sk-");
}

}  // namespace

std::vector<AllowedSigner> parse_allowed_signers(std::string_view text, std::string_view source) {
  std::vector<AllowedSigner> signers;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;

    const std::string where = std::string(source) + ":" + std::to_string(line_no);
    auto bad = [&](const std::string& what) { return InvalidInput(where + ": " + what); };

    // Principals: one field, or a double-quoted run that may hold spaces.
    std::string_view principals_field;
    if (line.front() == '"') {
      std::size_t close = line.find('"', 1);
      if (close == std::string_view::npos)
        throw bad("the quoted principals have no closing '\"': " + quoted(line));
      principals_field = line.substr(1, close - 1);
      line.remove_prefix(close + 1);
      if (!line.empty() && !is_space(line.front()))
        throw bad("expected a space after the quoted principals, found " + quoted(line));
    } else {
      auto [field, rest] = next_token(line);
      if (field.find('"') != std::string_view::npos)
        throw bad("expected principals without '\"' (or quoted as a whole), found " + quoted(field));
      principals_field = field;
      line = rest;
    }
    while (!line.empty() && is_space(line.front())) line.remove_prefix(1);

    AllowedSigner signer;
    for (std::string_view rest = principals_field;;) {
      std::size_t comma = rest.find(',');
      std::string_view principal = rest.substr(0, comma);
      if (principal.empty())
        throw bad("expected comma-separated principals, found an empty one in " + quoted(principals_field));
      signer.principals.emplace_back(principal);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }

    // Options, if any: up to the first space outside double quotes.
    std::size_t end = 0;
    for (bool in_quotes = false; end < line.size() && (in_quotes || !is_space(line[end])); ++end)
      if (line[end] == '"') in_quotes = !in_quotes;
    std::string_view field = line.substr(0, end);
    if (field.empty()) throw bad("expected a key after the principals, found nothing");
    if (!looks_like_key_type(field)) {
      std::optional<std::string> namespaces;
      if (std::string problem = check_options(field, namespaces); !problem.empty()) throw bad(problem);
      signer.options = std::string(field);
      line.remove_prefix(end);
      while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
    }
    auto [type, after_type] = next_token(line);
    if (type.empty()) throw bad("expected a key type (such as ssh-ed25519) after the options, found nothing");
    if (!looks_like_key_type(type))
      throw bad("expected a key type (such as ssh-ed25519), found " + quoted(type));
    auto [b64, comment] = next_token(after_type);
    signer.key = key_from_fields(type, b64, trim(comment), where, /*ed25519_only=*/false);
    signers.push_back(std::move(signer));
  }
  return signers;
}

std::string render_allowed_signers(const std::vector<AllowedSigner>& signers) {
  std::string out;
  for (const AllowedSigner& signer : signers) {
    const std::string who = "allowed signer for key " + signer.key.fingerprint();
    if (signer.principals.empty()) throw InvalidInput(who + ": expected at least one principal, found none");
    std::string principals;
    for (const std::string& p : signer.principals) {
      if (p.empty() || p.find_first_of(",\"\n\r") != std::string::npos)
        throw InvalidInput(who + ": a principal cannot hold ',', '\"' or a line break, and cannot be "
                                 "empty; found " + quoted(p));
      if (!principals.empty()) principals += ',';
      principals += p;
    }
    // A line starting with '#' would read back as a comment, and a space
    // would end the field: quoting keeps both as principals.
    if (principals.front() == '#' || principals.find_first_of(" \t") != std::string::npos)
      principals = "\"" + principals + "\"";
    out += principals;
    if (!signer.options.empty()) {
      std::optional<std::string> namespaces;
      if (std::string problem = check_options(signer.options, namespaces); !problem.empty())
        throw InvalidInput(who + ": " + problem);
      if (signer.options.find_first_of("\n\r") != std::string::npos ||
          looks_like_key_type(signer.options))
        throw InvalidInput(who + ": options cannot be written as " + quoted(signer.options));
      // A space inside the quotes is fine; outside them it would split the field.
      bool in_quotes = false;
      for (char c : signer.options) {
        if (c == '"') in_quotes = !in_quotes;
        if (!in_quotes && is_space(c))
          throw InvalidInput(who + ": options cannot hold a space outside quotes: " + quoted(signer.options));
      }
      out += ' ';
      out += signer.options;
    }
    if (signer.key.type.empty() || !looks_like_key_type(signer.key.type) ||
        signer.key.type.find_first_of(" \t\n\r") != std::string::npos)
      throw InvalidInput(who + ": expected a key type such as ssh-ed25519, found " + quoted(signer.key.type));
    if (signer.key.comment.find_first_of("\n\r") != std::string::npos)
      throw InvalidInput(who + ": a key comment cannot hold a line break: " + quoted(signer.key.comment));
    out += ' ';
    out += signer.key.to_text();
    out += '\n';
  }
  return out;
}

const AllowedSigner* find_signer(const std::vector<AllowedSigner>& signers, const SshPublicKey& key,
                                 std::string_view ns) {
  for (const AllowedSigner& signer : signers) {
    if (signer.key.blob != key.blob) continue;
    std::optional<std::string> namespaces;
    // Options that do not check out (a hand-built signer) never grant trust.
    if (!signer.options.empty() && !check_options(signer.options, namespaces).empty()) continue;
    if (namespaces && !match_pattern_list(ns, *namespaces)) continue;
    return &signer;
  }
  return nullptr;
}

}  // namespace kistore
