#include "objects/ssh_signature.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "objects/error.h"
#include "objects/ssh_wire.h"

namespace kistore {
namespace {

using namespace ssh_wire;

struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

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

namespace {

// The blob between the armor lines of an SSH signature, decoded; nullopt with
// `why` set when the armor is not exactly what ssh-keygen writes.
std::optional<std::string> dearmor_signature(std::string_view armored, std::string& why) {
  auto fail = [&](std::string detail) -> std::optional<std::string> {
    why = std::move(detail);
    return std::nullopt;
  };
  if (!armored.starts_with(kSigBegin) || armored.substr(kSigBegin.size(), 1) != "\n")
    return fail("expected the armor line " + std::string(kSigBegin) + ", found " +
                quoted(first_line(armored)));
  std::string_view body = armored.substr(kSigBegin.size() + 1);
  if (body.ends_with('\n')) body.remove_suffix(1);
  if (!body.ends_with(kSigEnd))
    return fail("expected the signature to end with the line " + std::string(kSigEnd) + ", found " +
                quoted(body.substr(body.rfind('\n') + 1)));
  body.remove_suffix(kSigEnd.size());
  if (body.empty()) return fail("expected base64 between the armor lines, found nothing");
  if (!body.ends_with('\n'))
    return fail("expected " + std::string(kSigEnd) + " at the start of a line, found it after " +
                quoted(body.substr(body.rfind('\n') + 1)));
  body.remove_suffix(1);
  const std::string b64_chars = std::string(kB64) + "=";
  std::string b64;
  std::size_t line_no = 2;  // the BEGIN line is line 1
  for (;;) {
    std::size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    if (line.empty())
      return fail("expected base64 on line " + std::to_string(line_no) +
                  " of the signature, found an empty line");
    if (line.find_first_not_of(b64_chars) != std::string_view::npos)
      return fail("expected base64 on line " + std::to_string(line_no) + " of the signature, found " +
                  quoted(line));
    b64.append(line);
    if (nl == std::string_view::npos) break;
    body.remove_prefix(nl + 1);
    ++line_no;
  }
  auto blob = base64_decode(b64);
  if (!blob) return fail("the text between the armor lines is not canonical base64");
  return blob;
}

// Whether `sig` is raw_public's Ed25519 signature of `tbs`; `why` says what
// OpenSSL could not do when it fails for another reason than a bad signature.
bool ed25519_verifies(std::string_view raw_public, std::string_view sig, std::string_view tbs, std::string& why) {
  PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                          reinterpret_cast<const unsigned char*>(raw_public.data()),
                                          raw_public.size()));
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!key || !ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1) {
    why = "OpenSSL could not load the signature's Ed25519 key: " + openssl_error();
    return false;
  }
  int ok = EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                            reinterpret_cast<const unsigned char*>(tbs.data()), tbs.size());
  ERR_clear_error();  // a bad signature is an answer, not an error to keep around
  return ok == 1;
}

}  // namespace

SshSignatureCheck verify_signature(std::string_view armored, std::string_view payload, std::string_view ns) {
  SshSignatureCheck check;
  auto invalid = [&](std::string detail) {
    check.valid = false;
    check.detail = std::move(detail);
    return check;
  };
  std::string why;
  auto blob = dearmor_signature(armored, why);
  if (!blob) return invalid(why);

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

  if (!ed25519_verifies(*raw_public, *sig, tbs, why)) {
    if (!why.empty()) return invalid(why);
    return invalid("Ed25519 signature by " + check.signer.fingerprint() +
                   " does not match the payload (the payload or the signature was changed)");
  }
  check.valid = true;
  check.detail = "good " + quoted(ns) + " signature with ED25519 key " + check.signer.fingerprint();
  return check;
}

}  // namespace kistore
