// The wire formats under kistore's SSH keys and signatures, shared by the
// files that implement objects/ssh_signature.h and by nothing else.
//
// base64 (RFC 4648), SSH wire strings (RFC 4251 §5), the Ed25519 key blob,
// the bytes an SSHSIG signature covers (PROTOCOL.sshsig), and the small text
// helpers their messages use. Internal to objects/: callers outside it use
// objects/ssh_signature.h.
//
// Thread-safety: plain functions, reentrant; a WireReader belongs to one
// thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "objects/ssh_signature.h"

struct evp_md_ctx_st;

namespace kistore::ssh_wire {

inline constexpr std::string_view kEd25519 = "ssh-ed25519";
inline constexpr std::size_t kEd25519KeyBytes = 32;
inline constexpr std::size_t kEd25519SignatureBytes = 64;

inline constexpr std::string_view kSigBegin = "-----BEGIN SSH SIGNATURE-----";
inline constexpr std::string_view kSigEnd = "-----END SSH SIGNATURE-----";
inline constexpr std::string_view kSigMagic = "SSHSIG";
inline constexpr std::uint32_t kSigVersion = 1;
// ssh-keygen wraps its armor at 70 columns (PROTOCOL.sshsig suggests 76, but
// byte-identical output with ssh-keygen is what lets tests compare bytes).
inline constexpr std::size_t kSigWrap = 70;

// The standard base64 alphabet.
inline constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// ---- base64 (RFC 4648, standard alphabet) --------------------------------

std::string base64_encode(std::string_view in, bool pad);
// Canonical padded base64 only: length a multiple of 4, '=' only at the end,
// unused bits zero; nullopt for anything else. Accepting other spellings
// would let one signature have several armored forms, which serves no one.
std::optional<std::string> base64_decode(std::string_view in);

// ---- SSH wire encoding (RFC 4251 §5) -------------------------------------

void put_u32(std::string& out, std::uint32_t v);
// uint32 length, then the bytes.
void put_string(std::string& out, std::string_view s);

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

// `s` without leading and trailing spaces, tabs and line ends.
std::string_view trim(std::string_view s);
bool is_space(char c);  // space or tab
// A short, printable rendering of input for "found …" in messages.
std::string quoted(std::string_view s, std::size_t max = 48);
std::string first_line(std::string_view s);
std::string lower(std::string_view s);  // ASCII letters only
// OpenSSL's oldest queued error as text (clearing the queue), for messages.
std::string openssl_error();

// ---- keys and signatures ----------------------------------------------------

// Overwrites a buffer that held key material when the scope ends, however
// it ends.
struct WipeOnExit {
  std::string& bytes;
  ~WipeOnExit() { wipe_key_material(bytes); }
};

struct MdCtxFree {
  void operator()(evp_md_ctx_st* c) const;
};
using MdCtxPtr = std::unique_ptr<evp_md_ctx_st, MdCtxFree>;

// The 32 key bytes of an Ed25519 public key blob, or nullopt when `blob` is
// not exactly string "ssh-ed25519", string 32 bytes.
std::optional<std::string_view> ed25519_raw(std::string_view blob);

// "<where>: key type <type> is not supported; …": why a key cannot be used.
std::string unsupported_type(std::string_view where, std::string_view type);

// Builds a key from the "type base64 comment" fields of a text line. With
// `ed25519_only`, other types are refused; otherwise they are kept after a
// structural check (their blob names the same type), for allowed-signers
// files that also list other people's keys. Throws InvalidInput naming `where`.
SshPublicKey key_from_fields(std::string_view type, std::string_view b64, std::string_view comment,
                             std::string_view where, bool ed25519_only);

// Splits `s` at the first run of spaces/tabs: the token before, the rest after.
std::pair<std::string_view, std::string_view> next_token(std::string_view s);

// The bytes an SSHSIG signature covers (PROTOCOL.sshsig §3): no version
// field here, unlike the blob.
std::string signed_data(std::string_view ns, std::string_view reserved, std::string_view hash_name,
                        std::string_view hash);

// `hash_name` ("sha512" or "sha256") of `payload`; nullopt for another name
// or when OpenSSL fails.
std::optional<std::string> digest(std::string_view hash_name, std::string_view payload);

}  // namespace kistore::ssh_wire
