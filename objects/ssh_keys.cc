// SSH public and private keys: parsing OpenSSH's text forms (PROTOCOL.key,
// .pub lines) into the values of objects/ssh_signature.h.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "objects/error.h"
#include "objects/ssh_signature.h"
#include "objects/ssh_wire.h"

namespace kistore {
namespace {

using namespace ssh_wire;

constexpr std::string_view kKeyBegin = "-----BEGIN OPENSSH PRIVATE KEY-----";
constexpr std::string_view kKeyEnd = "-----END OPENSSH PRIVATE KEY-----";
constexpr std::string_view kKeyMagic{"openssh-key-v1\0", 15};
// Unencrypted keys are padded to the "none" cipher's block size; ssh-keygen
// refuses a private section of any other length, and so do we.
constexpr std::size_t kKeyBlockSize = 8;

struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

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

namespace {

Error key_error(std::string_view source, const std::string& what) {
  return InvalidInput(std::string(source) + ": " + what);
}

// The bytes between the armor lines of an OpenSSH private key, decoded.
// The caller wipes them: they hold the private key in the clear.
std::string unarmor_private_key(std::string_view pem_text, std::string_view source) {
  if (pem_text.size() > SshPrivateKey::kMaxTextBytes)
    throw key_error(source, "expected an OpenSSH private key of a few hundred bytes, found more than " +
                                std::to_string(SshPrivateKey::kMaxTextBytes) + " bytes");
  std::string_view text = trim(pem_text);
  if (!text.starts_with(kKeyBegin)) {
    std::string found = quoted(first_line(text));
    if (text.starts_with("ssh-") || text.starts_with("ecdsa-") || text.starts_with("sk-"))
      found += " (a public key; pass the private key file, without .pub)";
    throw key_error(source, "expected an OpenSSH private key (" + std::string(kKeyBegin) + "), found " + found);
  }
  if (text.size() < kKeyBegin.size() + kKeyEnd.size() || !text.ends_with(kKeyEnd))
    throw key_error(source, "expected the private key to end with " + std::string(kKeyEnd) + ", found " +
                                quoted(text.substr(text.rfind('\n') + 1)));
  std::string_view body = text.substr(kKeyBegin.size(), text.size() - kKeyBegin.size() - kKeyEnd.size());
  // Key files get edited and copied around; unlike signatures, whitespace
  // inside the armor (CRLF line ends, indentation) carries no meaning here.
  std::string b64;
  for (char c : body)
    if (c != '\n' && c != '\r' && !is_space(c)) b64 += c;
  auto decoded = base64_decode(b64);
  wipe_key_material(b64);
  if (!decoded) throw key_error(source, "the text between the armor lines is not valid base64");
  return std::move(*decoded);
}

// The parts of an unencrypted one-key "openssh-key-v1" blob.
struct KeyFileParts {
  std::string_view public_blob;      // string "ssh-ed25519", string 32 bytes
  std::string_view raw_public;       // the 32 bytes
  std::string_view private_section;  // check words, key, comment, padding
};

KeyFileParts read_key_file(std::string_view decoded, std::string_view source) {
  WireReader r(decoded);
  if (r.bytes(kKeyMagic.size()) != kKeyMagic)
    throw key_error(source, "expected the magic \"openssh-key-v1\" at the start of the key data, found something else");
  auto cipher = r.string();
  auto kdf = r.string();
  auto kdf_options = r.string();
  auto nkeys = r.u32();
  if (!cipher || !kdf || !kdf_options || !nkeys) throw key_error(source, "the key data is cut short in its header");
  if (*cipher != "none" || *kdf != "none")
    throw key_error(source, "encrypted private keys are not supported (" +
                                (*cipher != "none" ? "cipher " + std::string(*cipher) : "kdf " + std::string(*kdf)) +
                                "); decrypt a copy with ssh-keygen -p or use an unencrypted key");
  if (*nkeys != 1) throw key_error(source, "expected one key in the file, found " + std::to_string(*nkeys));
  auto public_blob = r.string();
  auto private_section = r.string();
  if (!public_blob || !private_section) throw key_error(source, "the key data is cut short");
  if (!r.done())
    throw key_error(source, "expected nothing after the private section, found " +
                                std::to_string(r.rest().size()) + " more bytes");
  WireReader pub(*public_blob);
  auto type = pub.string();
  if (!type) throw key_error(source, "the public key in the file is cut short");
  if (*type != kEd25519) throw InvalidInput(unsupported_type(source, *type));
  auto raw_public = ed25519_raw(*public_blob);
  if (!raw_public) throw key_error(source, "the public key in the file is not a well-formed Ed25519 key");
  return {*public_blob, *raw_public, *private_section};
}

// What the private section holds, once checked against the file's public key.
struct PrivateParts {
  std::string_view seed;  // 32 bytes
  std::string_view comment;
};

PrivateParts read_private_section(const KeyFileParts& file, std::string_view source) {
  if (file.private_section.size() % kKeyBlockSize != 0)
    throw key_error(source, "expected the private section to be a multiple of " + std::to_string(kKeyBlockSize) +
                                " bytes, found " + std::to_string(file.private_section.size()));
  WireReader priv(file.private_section);
  auto check1 = priv.u32();
  auto check2 = priv.u32();
  if (!check1 || !check2 || *check1 != *check2)
    throw key_error(source, "the private section's check words differ: the file is damaged");
  auto priv_type = priv.string();
  auto priv_public = priv.string();
  auto secret = priv.string();  // seed (32) followed by the public key (32)
  auto comment = priv.string();
  if (!priv_type || !priv_public || !secret || !comment) throw key_error(source, "the private section is cut short");
  if (*priv_type != kEd25519)
    throw key_error(source, "expected the private section to hold an ssh-ed25519 key, found " + quoted(*priv_type));
  if (*priv_public != file.raw_public)
    throw key_error(source, "the private section's public key differs from the file's public key");
  if (secret->size() != 2 * kEd25519KeyBytes || secret->substr(kEd25519KeyBytes) != file.raw_public)
    throw key_error(source, "expected a 64-byte Ed25519 secret (seed then public key), found " +
                                std::to_string(secret->size()) + " bytes that are not one");
  std::string_view padding = priv.rest();
  for (std::size_t i = 0; i < padding.size(); ++i)
    if (std::uint8_t(padding[i]) != (i + 1) % 256)
      throw key_error(source, "expected padding bytes 1, 2, 3, ... after the key comment, found byte " +
                                  std::to_string(std::uint8_t(padding[i])) + " at position " + std::to_string(i + 1));
  return {secret->substr(0, kEd25519KeyBytes), *comment};
}

}  // namespace

SshPrivateKey SshPrivateKey::parse(std::string_view pem_text, std::string_view source) {
  std::string decoded = unarmor_private_key(pem_text, source);
  // The decoded bytes hold the private key in the clear: wipe them on every
  // way out rather than leave them in freed heap memory.
  const WipeOnExit wipe{decoded};
  const KeyFileParts file = read_key_file(decoded, source);
  const PrivateParts parts = read_private_section(file, source);

  PkeyPtr key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                           reinterpret_cast<const unsigned char*>(parts.seed.data()),
                                           parts.seed.size()));
  if (!key) throw key_error(source, "OpenSSL refused the Ed25519 seed: " + openssl_error());
  // The file stores the public key next to the seed; a key whose seed does
  // not give that public key would make signatures nobody can verify.
  unsigned char derived[kEd25519KeyBytes];
  std::size_t derived_len = sizeof derived;
  if (EVP_PKEY_get_raw_public_key(key.get(), derived, &derived_len) != 1 ||
      derived_len != kEd25519KeyBytes ||
      std::string_view(reinterpret_cast<const char*>(derived), derived_len) != file.raw_public)
    throw key_error(source, "the public key in the file does not belong to its private key: the file is damaged");

  SshPublicKey public_key{std::string(kEd25519), std::string(file.public_blob), std::string(parts.comment)};
  return SshPrivateKey(std::unique_ptr<evp_pkey_st, PkeyFree>(key.release()), std::move(public_key));
}

void wipe_key_material(std::string& bytes) { OPENSSL_cleanse(bytes.data(), bytes.size()); }

}  // namespace kistore
