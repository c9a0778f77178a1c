// SSH signatures in git's own format, made and checked with OpenSSL alone.
//
// kistore's history is a chain of git commits, optionally signed the way
// `git commit -S` with `gpg.format=ssh` signs them: an SSHSIG blob
// (openssh's PROTOCOL.sshsig) over the commit bytes, namespace "git", armored
// as "-----BEGIN SSH SIGNATURE-----". This file is for the store layer, which
// signs the commits it writes and checks the ones it reads, and for the
// command line, which loads keys and allowed-signers files. Signatures it makes
// are byte-identical to `ssh-keygen -Y sign -n git` (Ed25519 is deterministic),
// so stock `git verify-commit` accepts them, and it accepts signatures made by
// ssh-keygen. The formats are openssh's: PROTOCOL.sshsig (signatures),
// PROTOCOL.key (private key files) and ssh-keygen(1) "ALLOWED SIGNERS".
//
// Only Ed25519 keys sign and verify. Other key types are refused by name when
// they would be used, so a user learns why rather than getting a bad signature.
//
// Pure: these functions take bytes and give values; reading key files is the
// caller's business (cli/signing.h reads them, store/trust.h the
// allowed-signers files).
//
// Failures are kistore::Error (objects/error.h): kInvalidInput for text that
// is not what it should be ("<source>: expected …, found …"), kIO when
// OpenSSL fails. verify_signature never throws for a bad signature: a
// signature is data from someone else, and "not valid, because …" is an answer.
//
// Thread-safety: SshPublicKey and AllowedSigner are plain values; the free
// functions are reentrant. An SshPrivateKey may be used by one thread at a
// time (OpenSSL does not promise that signing with one EVP_PKEY from several
// threads at once is safe); distinct keys are independent.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct evp_pkey_st;  // OpenSSL's EVP_PKEY, kept out of this header

namespace kistore {

// An SSH public key as OpenSSH writes it in a .pub file.
struct SshPublicKey {
  std::string type;     // "ssh-ed25519"
  std::string blob;     // wire form: string type, string key (what fingerprints hash)
  std::string comment;  // free text after the key, often user@host; may be empty

  // "ssh-ed25519 <base64 blob> <comment>" (no comment part when it is empty;
  // no newline). parse_public_key(to_text()) gives back an equal key.
  std::string to_text() const;
  // "SHA256:<base64 of sha256(blob), without '=' padding>", the field
  // `ssh-keygen -l` prints.
  std::string fingerprint() const;

  friend bool operator==(const SshPublicKey&, const SshPublicKey&) = default;
};

// Parses one public key line, "ssh-ed25519 AAAA… [comment]", as in a .pub
// file (surrounding whitespace and one trailing newline are fine). `source`
// names the input in messages. Throws InvalidInput for anything else: other
// key types (named in the message), bad base64, a blob that is not an
// Ed25519 key, more than one line.
SshPublicKey parse_public_key(std::string_view text, std::string_view source);

// An Ed25519 private key parsed from an unencrypted OpenSSH private key file,
// as `ssh-keygen -t ed25519 -N ''` writes it. Move-only: it owns the OpenSSL
// key, and a copy of key material should be a decision, not an accident. A
// moved-from key may only be assigned to or destroyed. The decoded key bytes
// are wiped (OPENSSL_cleanse) once OpenSSL holds the key.
class SshPrivateKey {
 public:
  // A private key file is a few hundred bytes; parse refuses longer text,
  // and a reader need not read more than one byte beyond this to know.
  static constexpr std::size_t kMaxTextBytes = 64 * 1024;

  // Parses "-----BEGIN OPENSSH PRIVATE KEY-----" text. Throws InvalidInput,
  // naming `source`, for text over kMaxTextBytes, other formats (PEM/PKCS#8
  // keys, public keys), encrypted keys (naming the cipher), key types other
  // than ssh-ed25519 (naming the type), files holding several keys, and
  // damaged keys (check words that differ, a public half that does not match
  // the private one). The caller should wipe `pem_text` afterwards
  // (wipe_key_material): parse wipes only its own copies.
  static SshPrivateKey parse(std::string_view pem_text, std::string_view source);

  SshPrivateKey(SshPrivateKey&&) noexcept;
  SshPrivateKey& operator=(SshPrivateKey&&) noexcept;
  SshPrivateKey(const SshPrivateKey&) = delete;
  SshPrivateKey& operator=(const SshPrivateKey&) = delete;
  ~SshPrivateKey();

  // The public half, with the comment stored in the private key file.
  const SshPublicKey& public_key() const { return public_key_; }

  // Signs `payload` in namespace `ns` (hash sha512) and returns the armored
  // signature: "-----BEGIN SSH SIGNATURE-----\n", base64 wrapped at 70
  // columns, "\n-----END SSH SIGNATURE-----\n". Byte-identical to
  // `ssh-keygen -Y sign -n <ns> -f <key>`. Throws InvalidInput for an empty
  // namespace (PROTOCOL.sshsig forbids it), IOError if OpenSSL fails.
  std::string sign(std::string_view payload, std::string_view ns = "git") const;

 private:
  struct PkeyFree {
    void operator()(evp_pkey_st* key) const;
  };
  SshPrivateKey(std::unique_ptr<evp_pkey_st, PkeyFree> key, SshPublicKey public_key);

  std::unique_ptr<evp_pkey_st, PkeyFree> key_;
  SshPublicKey public_key_;
};

// Overwrites bytes that held key material (the text of a private key file),
// in a way the compiler may not drop as a dead store (OPENSSL_cleanse). Never
// fails.
void wipe_key_material(std::string& bytes);

// What verify_signature found.
struct SshSignatureCheck {
  bool valid = false;
  // The key embedded in the signature (comment empty). Filled in whenever
  // the blob got far enough to hold one, also when the signature is invalid;
  // empty type and blob otherwise. A valid signature proves only that this
  // key signed: whether the key is trusted is find_signer's question.
  SshPublicKey signer;
  // Why it is invalid ("namespace is \"file\", expected \"git\"", "Ed25519
  // signature does not match the payload", …), or on success a line like
  // ssh-keygen's: "good \"git\" signature with ED25519 key SHA256:…".
  std::string detail;
};

// Checks an armored SSH signature over `payload` in namespace `ns`. Strict:
// the armor must be the BEGIN line, base64 lines (canonical base64, '\n'
// line ends), the END line and at most one final newline; the blob must have
// magic "SSHSIG", version 1, an ssh-ed25519 public key, namespace exactly
// `ns`, hash "sha512" or "sha256", an ssh-ed25519 signature of 64 bytes, and
// nothing after it. The reserved field is signed over but its content is
// ignored, as PROTOCOL.sshsig asks. Never throws for malformed input.
SshSignatureCheck verify_signature(std::string_view armored, std::string_view payload,
                                   std::string_view ns = "git");

// One line of an allowed-signers file (git's gpg.ssh.allowedSignersFile,
// ssh-keygen(1) "ALLOWED SIGNERS"): "principals [options] keytype base64 [comment]".
struct AllowedSigner {
  // Identity patterns such as "alice@example.com" or "*@example.com", as
  // written; kistore does not match them, it keeps them for git and people.
  std::vector<std::string> principals;
  // The options field exactly as written (e.g. namespaces="git"), or empty.
  std::string options;
  SshPublicKey key;

  friend bool operator==(const AllowedSigner&, const AllowedSigner&) = default;
};

// Parses an allowed-signers file. Blank lines and lines whose first
// non-blank character is '#' are skipped. Principals are comma-separated;
// a principals field that starts with '"' runs to the next '"' and may hold
// spaces. Options are recognised as ssh-keygen does, keywords in any case:
//   namespaces="list"  kept; find_signer honours it.
//   cert-authority     refused: kistore verifies plain keys, not
//                      certificates, so such a line could only ever mislead.
//   valid-after=, valid-before=
//                      refused: kistore's objects layer has no clock to check
//                      them against, and ignoring them would accept keys git
//                      rejects.
//   anything else      refused, as ssh-keygen refuses it.
// Any key type is accepted here (a shared file may list RSA keys of others);
// such a line can never match, because only Ed25519 signatures verify.
// Throws InvalidInput "<source>:<line>: expected …, found …".
std::vector<AllowedSigner> parse_allowed_signers(std::string_view text,
                                                 std::string_view source);

// Writes signers one per line, "principals[ options] type base64[ comment]\n",
// quoting the principals when one holds a space or tab. The inverse of
// parse_allowed_signers: parsing the output gives back equal signers
// (comment lines and blank lines of a parsed file are not kept). Throws
// InvalidInput for a signer that cannot be written so (no principals, an
// empty principal, a principal holding ',', '"' or a line break).
std::string render_allowed_signers(const std::vector<AllowedSigner>& signers);

// The first signer whose key blob equals `key`'s (comments do not matter)
// and whose namespaces option, when present, lets `ns` in (a pattern list as
// in ssh_config(5): '*' and '?' wildcards, '!' negates). nullptr when none.
// The returned pointer points into `signers`.
const AllowedSigner* find_signer(const std::vector<AllowedSigner>& signers,
                                 const SshPublicKey& key, std::string_view ns = "git");

}  // namespace kistore
