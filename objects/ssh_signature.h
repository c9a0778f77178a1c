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
// caller's business (cli/signing.h reads them, store/history/trust.h the
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
#include <cstdint>
#include <functional>
#include <optional>
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
  // The line of the file it was read from (1-based); 0 when not read from a
  // file. Not part of equality: it says where, not what.
  std::size_t line = 0;

  friend bool operator==(const AllowedSigner& a, const AllowedSigner& b) {
    return a.principals == b.principals && a.options == b.options && a.key == b.key;
  }
};

// A valid-after / valid-before time as ssh-keygen reads it:
// YYYYMMDD[HHMM[SS]], with a final 'Z' (or 'z') for UTC, else the local time
// of the machine that checks.
struct KeyValidityTime {
  std::int64_t civil = 0;  // the fields' seconds since 1970-01-01T00:00:00, counted as if UTC
  bool utc = false;        // written with 'Z'
  std::string text;        // as written, for messages
};

// The options of one allowed-signers line, as ssh-keygen honours them.
struct SignerOptions {
  std::optional<std::string> namespaces;  // the pattern list of namespaces="…"
  std::optional<KeyValidityTime> valid_after, valid_before;
  // cert-authority: the key signs certificates, and ssh-keygen trusts it for
  // nothing else. kistore verifies plain keys only, so such a line trusts
  // nothing here (find_signer skips it; `trust list` says so).
  bool cert_authority = false;
};

// Parses an options field ("namespaces=\"git\",valid-after=\"20240101\"").
// Throws InvalidInput "<where>: expected …, found …" for what ssh-keygen
// refuses too: an unknown option, a value without double quotes, a time not
// of the form YYYYMMDD[HHMM[SS]][Z] or equal to the epoch, an option given twice.
SignerOptions parse_signer_options(std::string_view options, std::string_view where);

// When a signature was made, for the valid-after/valid-before options: git
// passes the signed commit's committer time to `ssh-keygen -Y verify` as
// -Overify-time, and ssh-keygen trusts a key when valid-after <= time <=
// valid-before.
struct SigningTime {
  std::int64_t seconds = 0;  // since the epoch (UTC)
  // The UTC seconds of a local civil time (a validity time without 'Z'),
  // given as seconds counted as if UTC. Empty: local time is UTC. The store
  // layer passes the machine's time zone (mktime), as ssh-keygen uses it.
  std::function<std::int64_t(std::int64_t civil)> local_to_utc;
};

// Parses an allowed-signers file. Blank lines and lines whose first
// non-blank character is '#' are skipped. Principals are comma-separated;
// a principals field that starts with '"' runs to the next '"' and may hold
// spaces. Options are recognised as ssh-keygen does, keywords in any case:
//   namespaces="list"  kept; find_signer honours it.
//   valid-after="T", valid-before="T"
//                      kept; find_signer honours them against the signing
//                      time it is given (the signed commit's committer time).
//   cert-authority     kept, and never matches: kistore verifies plain keys,
//                      not certificates, and ssh-keygen does not trust a
//                      CA key's own signatures either.
//   anything else      refused, as ssh-keygen refuses it.
// Any key type is accepted here (a shared file may list RSA keys of others);
// such a line can never match, because only Ed25519 signatures verify.
// Each signer's `line` is its line number.
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

// What find_signer found: the signer, or why no line with that key counts.
struct SignerLookup {
  const AllowedSigner* signer = nullptr;  // points into the list searched
  // When signer is null and some line lists the key: why that line does not
  // count, e.g. "line 3 (alice): the key is not valid before
  // 2030-01-01T00:00:00Z (valid-after=\"20300101Z\"), and the commit was
  // signed at 2026-12-02T14:13:50Z". Empty when no line lists the key.
  std::string refused;
};

// The first signer whose key blob equals `key`'s (comments do not matter),
// whose namespaces option, when present, lets `ns` in (a pattern list as in
// ssh_config(5): '*' and '?' wildcards, '!' negates), that is no
// cert-authority, and whose valid-after/valid-before, when present, hold the
// signing time `when` (inclusive at both ends, as ssh-keygen; without a
// `when`, such a line never matches).
SignerLookup lookup_signer(const std::vector<AllowedSigner>& signers, const SshPublicKey& key,
                           std::string_view ns = "git", const SigningTime* when = nullptr);
// lookup_signer's signer: nullptr when none.
const AllowedSigner* find_signer(const std::vector<AllowedSigner>& signers,
                                 const SshPublicKey& key, std::string_view ns = "git",
                                 const SigningTime* when = nullptr);

// What `kistore trust remove PRINCIPAL` does to an allowed-signers file.
struct TrustLineChange {
  std::size_t line = 0;  // 1-based, in the file before the change
  std::string text;      // the line as it was (no line end)
  std::string why;       // a sentence for the user
};
struct TrustRemoval {
  std::string text;                      // the file afterwards: every other line byte for byte
  std::vector<TrustLineChange> removed;  // the lines taken out, in file order
  // Lines left in place that a user may want to look at: a principal pattern
  // that matches PRINCIPAL ("*@example.com") on a line whose key is not
  // PRINCIPAL's.
  std::vector<TrustLineChange> notes;
};
// Stops every key listed for `principal` (an exact principal of some line):
// every line that lists one of those keys goes, whatever its shape: a line
// naming only `principal`, one naming it among others (kistore trusts keys,
// not names, so keeping the line for the others would keep the key trusted),
// and one listing the same key for another principal. Lines are removed
// whole, the rest of the file kept byte for byte. `removed` is empty when no
// line names `principal`. Throws as parse_allowed_signers.
TrustRemoval remove_principal(std::string_view text, std::string_view principal, std::string_view source);

}  // namespace kistore
