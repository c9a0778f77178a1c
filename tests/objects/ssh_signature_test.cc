// Tests for objects/ssh_signature.h, with the real tools as the reference:
// keys come from ssh-keygen, kistore's signatures must be byte-identical to
// ssh-keygen's and pass `ssh-keygen -Y verify`, ssh-keygen's must pass
// verify_signature, and a commit signed by kistore must pass stock
// `git verify-commit`. Needs ssh-keygen and git on PATH.
#include "objects/ssh_signature.h"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "objects/error.h"

namespace fs = std::filesystem;
using kistore::AllowedSigner;
using kistore::SshPrivateKey;
using kistore::SshPublicKey;

namespace {

// ---- shell helpers --------------------------------------------------------------

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Ran {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

// A temporary directory that commands run in; removed with everything in it.
class Scratch {
 public:
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "kistore-ssh-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    dir_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs `command` with sh in the scratch directory; git there sees no
  // user or system configuration, so a developer's commit.gpgsign or
  // signing key cannot change what the tests see.
  Ran run(const std::string& command) const {
    const std::string err_file = path(".stderr");
    const std::string full = "cd " + sh_quote(dir_.string()) +
                             " && export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 && { " +
                             command + "\n} 2>" + sh_quote(err_file);
    FILE* pipe = popen(full.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, read(".stderr")};
  }
  // As run, but the command must succeed; returns its stdout.
  std::string must(const std::string& command) const {
    Ran r = run(command);
    INFO("command: " << command << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  }

  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream f(path(name), std::ios::binary);
    f << bytes;
    REQUIRE(f.good());
  }
  std::string read(const std::string& name) const {
    std::ifstream f(path(name), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

  // The private key file <name>, parsed with its path as the source (the
  // reading that cli/signing.h does, here in the test).
  SshPrivateKey key(const std::string& name) const { return SshPrivateKey::parse(read(name), path(name)); }

  // ssh-keygen -t <type> writing <name> and <name>.pub, comment test@example.
  void keygen(const std::string& name, const std::string& args = "-t ed25519 -N ''") const {
    must("ssh-keygen -q " + args + " -C test@example -f " + name);
  }

 private:
  fs::path dir_;
};

// ---- wire helpers, to build damaged inputs the tools would never write ----------

std::string b64_encode(const std::string& in) {
  static const char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    std::uint32_t v = std::uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) v |= std::uint8_t(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= std::uint8_t(in[i + 2]);
    out += k[v >> 18];
    out += k[v >> 12 & 63];
    out += i + 1 < in.size() ? k[v >> 6 & 63] : '=';
    out += i + 2 < in.size() ? k[v & 63] : '=';
  }
  return out;
}

std::string b64_decode(const std::string& in) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* p = c ? std::strchr(k, c) : nullptr;
    if (p == nullptr) continue;  // '=', newlines
    acc = acc << 6 | static_cast<std::uint32_t>(p - k);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>(acc >> bits & 0xff);
    }
  }
  return out;
}

// The base64 between two armor lines, and armor around base64 (70 columns).
std::string unarmor(const std::string& armored) {
  std::size_t begin = armored.find('\n') + 1;
  std::size_t end = armored.find("-----END");
  return armored.substr(begin, end - begin);
}
std::string armor(const std::string& blob, const std::string& label) {
  std::string b64 = b64_encode(blob), out = "-----BEGIN " + label + "-----\n";
  for (std::size_t i = 0; i < b64.size(); i += 70) out += b64.substr(i, 70) + "\n";
  return out + "-----END " + label + "-----\n";
}

std::string u32(std::uint32_t v) {
  return {char(v >> 24), char(v >> 16 & 0xff), char(v >> 8 & 0xff), char(v & 0xff)};
}
std::string str(const std::string& s) { return u32(static_cast<std::uint32_t>(s.size())) + s; }

// Splits an SSHSIG blob into magic, version and its five strings.
struct SigFields {
  std::string magic, version, pubkey, ns, reserved, hash, signature;
  std::string join() const {
    return magic + version + str(pubkey) + str(ns) + str(reserved) + str(hash) + str(signature);
  }
};
SigFields split_sig(const std::string& blob) {
  SigFields f;
  std::size_t pos = 0;
  auto take = [&](std::size_t n) {
    std::string s = blob.substr(pos, n);
    pos += n;
    return s;
  };
  auto take_str = [&] {
    std::string len = take(4);
    std::uint32_t n = std::uint8_t(len[0]) << 24 | std::uint8_t(len[1]) << 16 | std::uint8_t(len[2]) << 8 |
                      std::uint8_t(len[3]);
    return take(n);
  };
  f.magic = take(6);
  f.version = take(4);
  f.pubkey = take_str();
  f.ns = take_str();
  f.reserved = take_str();
  f.hash = take_str();
  f.signature = take_str();
  REQUIRE(pos == blob.size());
  return f;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t i = 0; (i = s.find(from, i)) != std::string::npos; i += to.size()) s.replace(i, from.size(), to);
  return s;
}

// Flips one base64 digit at `index` (counting base64 characters only).
std::string flip_b64_char(std::string armored, std::size_t index) {
  std::size_t seen = 0;
  for (std::size_t i = armored.find('\n') + 1; i < armored.size(); ++i) {
    if (armored[i] == '\n') continue;
    if (seen++ == index) {
      armored[i] = armored[i] == 'A' ? 'B' : 'A';
      return armored;
    }
  }
  FAIL("index beyond the base64");
  return armored;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kistore::Error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::vector<std::string>& payloads() {
  static const std::vector<std::string> p = [] {
    std::vector<std::string> v = {"", "hello\n", std::string("nul\0inside\xff\xfe", 12)};
    std::string big;
    for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + "\n";
    v.push_back(big);
    return v;
  }();
  return p;
}

}  // namespace

TEST_CASE("kistore's signature is byte-identical to ssh-keygen's and ssh-keygen verifies it", "[ssh]") {
  Scratch s;
  s.keygen("k");
  s.write("allowed", "test@example " + s.read("k.pub"));
  const SshPrivateKey key = s.key("k");

  for (const std::string ns : {"git", "file"}) {
    for (std::size_t i = 0; i < payloads().size(); ++i) {
      INFO("namespace " << ns << ", payload " << i);
      s.write("payload", payloads()[i]);
      const std::string ours = key.sign(payloads()[i], ns);
      const std::string theirs = s.must("ssh-keygen -Y sign -n " + ns + " -f k < payload");
      CHECK(ours == theirs);

      s.write("ours.sig", ours);
      Ran verified = s.run("ssh-keygen -Y verify -f allowed -I test@example -n " + ns +
                           " -s ours.sig < payload");
      INFO(verified.err);
      CHECK(verified.exit_code == 0);
      CHECK(verified.out.find("Good \"" + ns + "\" signature for test@example") != std::string::npos);
    }
  }
}

TEST_CASE("verify_signature accepts ssh-keygen's signatures, sha512 and sha256", "[ssh]") {
  Scratch s;
  s.keygen("k");
  const SshPublicKey pub = kistore::parse_public_key(s.read("k.pub"), "k.pub");
  for (const std::string hash : {"sha512", "sha256"}) {
    for (const std::string& payload : payloads()) {
      s.write("payload", payload);
      const std::string sig = s.must("ssh-keygen -Y sign -n git -O hashalg=" + hash + " -f k < payload");
      auto check = kistore::verify_signature(sig, payload);
      INFO(hash << ": " << check.detail);
      CHECK(check.valid);
      CHECK(check.signer.blob == pub.blob);
      CHECK(check.signer.fingerprint() == pub.fingerprint());
      CHECK(check.detail.find(pub.fingerprint()) != std::string::npos);
      // git hands the signature over without its final newline.
      CHECK(kistore::verify_signature(sig.substr(0, sig.size() - 1), payload).valid);
    }
  }
}

TEST_CASE("a changed payload, namespace or signature fails, and ssh-keygen agrees", "[ssh]") {
  Scratch s;
  s.keygen("k");
  s.write("allowed", "test@example " + s.read("k.pub"));
  const SshPrivateKey key = s.key("k");
  const std::string payload = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nmessage\n";
  const std::string sig = key.sign(payload);
  REQUIRE(kistore::verify_signature(sig, payload).valid);

  auto ssh_keygen_accepts = [&](const std::string& armored, const std::string& data, const std::string& ns) {
    s.write("t.sig", armored);
    s.write("t.payload", data);
    return s.run("ssh-keygen -Y verify -f allowed -I test@example -n " + ns + " -s t.sig < t.payload")
               .exit_code == 0;
  };

  SECTION("tampered payload") {
    const std::string changed = payload + " ";
    auto check = kistore::verify_signature(sig, changed);
    CHECK_FALSE(check.valid);
    CHECK(check.detail.find("does not match the payload") != std::string::npos);
    CHECK(check.signer.blob == key.public_key().blob);  // who claims to have signed is still known
    CHECK_FALSE(ssh_keygen_accepts(sig, changed, "git"));
  }
  SECTION("wrong namespace") {
    auto check = kistore::verify_signature(sig, payload, "file");
    CHECK_FALSE(check.valid);
    CHECK(check.detail == "namespace is \"git\", expected \"file\"");
    CHECK_FALSE(ssh_keygen_accepts(sig, payload, "file"));
  }
  SECTION("one signature byte flipped") {
    // The Ed25519 signature is the blob's last 64 bytes: base64 digit 200 of
    // 232 lies inside it.
    const std::string flipped = flip_b64_char(sig, 200);
    REQUIRE(flipped != sig);
    auto check = kistore::verify_signature(flipped, payload);
    CHECK_FALSE(check.valid);
    CHECK(check.detail.find("does not match the payload") != std::string::npos);
    CHECK_FALSE(ssh_keygen_accepts(flipped, payload, "git"));
  }
  SECTION("a public key byte flipped") {
    const std::string flipped = flip_b64_char(sig, 50);  // byte 37: the raw key
    auto check = kistore::verify_signature(flipped, payload);
    CHECK_FALSE(check.valid);
    CHECK(check.signer.blob != key.public_key().blob);
    CHECK_FALSE(ssh_keygen_accepts(flipped, payload, "git"));
  }
}

TEST_CASE("malformed signatures are invalid with a detail, never an exception", "[ssh]") {
  Scratch s;
  s.keygen("k");
  const SshPrivateKey key = s.key("k");
  const std::string payload = "payload\n";
  const std::string sig = key.sign(payload);
  const SigFields good = split_sig(b64_decode(unarmor(sig)));
  auto with = [&](auto change) {
    SigFields f = good;
    change(f);
    return armor(f.join(), "SSH SIGNATURE");
  };
  REQUIRE(with([](SigFields&) {}) == sig);  // the test's own armor matches

  struct Case {
    const char* name;
    std::string armored;
    const char* detail;  // a part of the expected detail
  };
  const std::string body = unarmor(sig);
  const std::vector<Case> cases = {
      {"empty", "", "expected the armor line -----BEGIN SSH SIGNATURE-----"},
      {"a PGP signature", "-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----\n",
       "expected the armor line -----BEGIN SSH SIGNATURE-----, found \"-----BEGIN PGP SIGNATURE-----\""},
      {"no END line", "-----BEGIN SSH SIGNATURE-----\n" + body, "expected the signature to end with the line"},
      {"two final newlines", sig + "\n", "expected the signature to end with the line"},
      {"only the BEGIN line", "-----BEGIN SSH SIGNATURE-----\n", "expected the signature to end with the line"},
      {"nothing inside", "-----BEGIN SSH SIGNATURE-----\n-----END SSH SIGNATURE-----\n",
       "expected base64 between the armor lines, found nothing"},
      {"an empty line inside", std::string(sig).insert(sig.find('\n'), "\n"), "line 2 of the signature, found an empty line"},
      {"CRLF line ends", replace_all(sig, "\n", "\r\n"), "expected"},
      {"a bad character", replace_all(sig, body.substr(0, 6), "U1N*U0"), "expected base64 on line 2"},
      {"base64 cut mid-group", replace_all(sig, body, body.substr(0, body.size() - 4) + "\n"),
       "not canonical base64"},
      {"wrong magic", with([](SigFields& f) { f.magic = "SSHSIH"; }), "expected the magic \"SSHSIG\""},
      {"version 2", with([](SigFields& f) { f.version = u32(2); }), "expected SSHSIG version 1, found version 2"},
      {"an RSA key", with([](SigFields& f) { f.pubkey = str("ssh-rsa") + str("xx"); }),
       "signed with a \"ssh-rsa\" key"},
      {"a short Ed25519 key", with([](SigFields& f) { f.pubkey.pop_back(); }), "not 32 bytes"},
      {"hash md5", with([](SigFields& f) { f.hash = "md5"; }),
       "expected hash \"sha512\" or \"sha256\", found \"md5\""},
      {"hash switched to sha256", with([](SigFields& f) { f.hash = "sha256"; }), "does not match the payload"},
      {"reserved field filled in", with([](SigFields& f) { f.reserved = "x"; }), "does not match the payload"},
      {"an rsa-sha2-512 signature", with([](SigFields& f) { f.signature = str("rsa-sha2-512") + str("x"); }),
       "expected an ssh-ed25519 signature"},
      {"a 63-byte signature",
       with([](SigFields& f) { f.signature = str("ssh-ed25519") + str(std::string(63, 'x')); }),
       "expected a 64-byte Ed25519 signature, found 63 bytes"},
      {"bytes after the signature", armor(good.join() + "x", "SSH SIGNATURE"),
       "expected nothing after the signature field, found 1 more bytes"},
      {"blob cut short", armor(good.join().substr(0, 100), "SSH SIGNATURE"), "cut short"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    kistore::SshSignatureCheck check;
    REQUIRE_NOTHROW(check = kistore::verify_signature(c.armored, payload));
    CHECK_FALSE(check.valid);
    INFO("detail: " << check.detail);
    CHECK(check.detail.find(c.detail) != std::string::npos);
  }

  // Every truncation and every single changed character: invalid, no throw.
  for (std::size_t n = 0; n < sig.size() - 1; ++n) {
    INFO("first " << n << " bytes");
    kistore::SshSignatureCheck check;
    REQUIRE_NOTHROW(check = kistore::verify_signature(sig.substr(0, n), payload));
    CHECK_FALSE(check.valid);
  }
  for (std::size_t i = 0; i < sig.size(); ++i) {
    for (char c : {'A', '\n', '=', '\0'}) {
      if (sig[i] == c) continue;
      std::string changed = sig;
      changed[i] = c;
      INFO("byte " << i << " set to " << int(c));
      kistore::SshSignatureCheck check;
      REQUIRE_NOTHROW(check = kistore::verify_signature(changed, payload));
      CHECK_FALSE(check.valid);
    }
  }
}

TEST_CASE("private keys: what is refused and why", "[ssh]") {
  Scratch s;

  SECTION("an encrypted key") {
    s.keygen("enc", "-t ed25519 -N secret");
    std::string e = error_of([&] { s.key("enc"); });
    CHECK(e == s.path("enc") +
                   ": encrypted private keys are not supported (cipher aes256-ctr); decrypt a copy with "
                   "ssh-keygen -p or use an unencrypted key");
  }
  SECTION("an RSA key, and its public key") {
    s.keygen("rsa", "-t rsa -b 2048 -N ''");
    std::string e = error_of([&] { s.key("rsa"); });
    CHECK(e.find(s.path("rsa") + ": key type ssh-rsa is not supported") == 0);
    e = error_of([&] { kistore::parse_public_key(s.read("rsa.pub"), "rsa.pub"); });
    CHECK(e.find("rsa.pub: key type ssh-rsa is not supported") == 0);
  }
  SECTION("an ECDSA key") {
    s.keygen("ec", "-t ecdsa -N ''");
    CHECK(error_of([&] { s.key("ec"); }).find("key type ecdsa-sha2-nistp256") !=
          std::string::npos);
  }
  SECTION("a key in the old PEM format") {
    s.keygen("pem", "-t ecdsa -m PEM -N ''");
    CHECK(error_of([&] { SshPrivateKey::parse(s.read("pem"), "pem"); }) ==
          "pem: expected an OpenSSH private key (-----BEGIN OPENSSH PRIVATE KEY-----), found "
          "\"-----BEGIN EC PRIVATE KEY-----\"");
  }
  SECTION("the public key file instead of the private one") {
    s.keygen("k");
    std::string e = error_of([&] { SshPrivateKey::parse(s.read("k.pub"), "k.pub"); });
    CHECK(e.find("k.pub: expected an OpenSSH private key") == 0);
    CHECK(e.find("(a public key; pass the private key file, without .pub)") != std::string::npos);
  }
  SECTION("text longer than any key file") {
    s.keygen("k");
    std::string big = s.read("k") + std::string(SshPrivateKey::kMaxTextBytes, '\n');
    try {
      SshPrivateKey::parse(big, "big");
      FAIL("no error");
    } catch (const kistore::Error& e) {
      CHECK(e.code() == kistore::ErrorCode::kInvalidInput);
      CHECK(std::string(e.what()) == "big: expected an OpenSSH private key of a few hundred bytes, found more than " +
                                         std::to_string(SshPrivateKey::kMaxTextBytes) + " bytes");
    }
    // At the limit exactly, the same key still parses (trailing blank lines are trimmed).
    std::string at_limit = s.read("k");
    at_limit.resize(SshPrivateKey::kMaxTextBytes, '\n');
    CHECK(SshPrivateKey::parse(at_limit, "k").public_key() == kistore::parse_public_key(s.read("k.pub"), "k.pub"));
  }
  SECTION("damaged keys") {
    s.keygen("k");
    const std::string text = s.read("k");
    const std::string blob = b64_decode(unarmor(text));
    // Layout: magic(15) "none" "none" "" n=1 pubkey(51) private-section.
    const std::size_t priv = 15 + (4 + 4) * 2 + 4 + 4 + 4 + 51 + 4;
    REQUIRE(blob.substr(priv + 8, 15) == str("ssh-ed25519"));
    auto damaged = [&](std::size_t offset) {
      std::string b = blob;
      b[offset] ^= 1;
      return armor(b, "OPENSSH PRIVATE KEY");
    };
    REQUIRE_NOTHROW(SshPrivateKey::parse(armor(blob, "OPENSSH PRIVATE KEY"), "k"));
    CHECK(error_of([&] { SshPrivateKey::parse(damaged(priv), "k"); }) ==
          "k: the private section's check words differ: the file is damaged");
    const std::size_t seed = priv + 8 + 15 + 36 + 4;
    CHECK(error_of([&] { SshPrivateKey::parse(damaged(seed), "k"); }) ==
          "k: the public key in the file does not belong to its private key: the file is damaged");
    CHECK(error_of([&] { SshPrivateKey::parse(damaged(blob.size() - 1), "k"); })
              .find("k: expected padding bytes 1, 2, 3") == 0);
    CHECK(error_of([&] { SshPrivateKey::parse(damaged(0), "k"); }) ==
          "k: expected the magic \"openssh-key-v1\" at the start of the key data, found something else");
  }
  SECTION("every truncation is refused as invalid input, nothing else escapes") {
    s.keygen("k");
    const std::string text = s.read("k");
    for (std::size_t n = 0; n + 1 < text.size(); ++n) {
      INFO("first " << n << " bytes");
      try {
        SshPrivateKey::parse(text.substr(0, n), "k");
        FAIL("accepted");
      } catch (const kistore::Error& e) {
        CHECK(e.code() == kistore::ErrorCode::kInvalidInput);
      }
    }
  }
  SECTION("an empty namespace") {
    s.keygen("k");
    CHECK(error_of([&] { s.key("k").sign("x", ""); }).find("namespace must not be empty") !=
          std::string::npos);
  }
}

TEST_CASE("public keys: text round trip and ssh-keygen's fingerprint", "[ssh]") {
  Scratch s;
  s.keygen("k");
  const std::string pub_text = s.read("k.pub");
  const SshPublicKey pub = kistore::parse_public_key(pub_text, "k.pub");
  CHECK(pub.type == "ssh-ed25519");
  CHECK(pub.comment == "test@example");
  CHECK(pub.to_text() + "\n" == pub_text);
  CHECK(kistore::parse_public_key(pub.to_text(), "x") == pub);

  // "256 SHA256:… test@example (ED25519)"
  const std::string listed = s.must("ssh-keygen -lf k.pub");
  const std::size_t from = listed.find(' ') + 1;
  CHECK(pub.fingerprint() == listed.substr(from, listed.find(' ', from) - from));

  const SshPrivateKey key = s.key("k");
  CHECK(key.public_key() == pub);  // the private key file keeps the comment too
  SshPrivateKey moved = s.key("k");
  SshPrivateKey other = std::move(moved);
  CHECK(other.sign("x") == key.sign("x"));

  SshPublicKey bare = pub;
  bare.comment.clear();
  CHECK(kistore::parse_public_key(bare.to_text(), "x") == bare);

  struct Bad {
    std::string text;
    const char* error;
  };
  const std::string b64 = pub.to_text().substr(12, 68);
  const std::vector<Bad> bad = {
      {"", "x: expected a public key line (ssh-ed25519 AAAA... comment), found \"\""},
      {"ssh-ed25519", "x: expected a public key line"},
      {"ssh-dss AAAA", "x: key type ssh-dss is not supported"},
      {"ssh-ed25519 AAAA*", "x: expected base64 key data after ssh-ed25519, found \"AAAA*\""},
      {"ssh-ed25519 " + b64 + "\nssh-ed25519 " + b64, "x: expected one public key line"},
      {"ssh-ed25519 AAAAB3NzaC1yc2EAAAADAQABAAABgQC7",  // an RSA blob under an Ed25519 label
       "x: key data says its type is \"ssh-rsa\", the line says ssh-ed25519"},
      {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAA2FiYw==", "x: expected an Ed25519 key blob"},
      {"-----BEGIN OPENSSH PRIVATE KEY-----", "x: expected a public key line"},
  };
  for (const Bad& b : bad) {
    INFO(b.text);
    CHECK(error_of([&] { kistore::parse_public_key(b.text, "x"); }).find(b.error) == 0);
  }
}

TEST_CASE("allowed signers: parse, render, find, and ssh-keygen reads what we write", "[ssh]") {
  Scratch s;
  s.keygen("k");
  s.keygen("other");
  s.keygen("rsa", "-t rsa -b 2048 -N ''");
  const SshPublicKey pub = kistore::parse_public_key(s.read("k.pub"), "k.pub");
  const SshPublicKey other = kistore::parse_public_key(s.read("other.pub"), "other.pub");
  const std::string rsa_line = s.read("rsa.pub");

  const std::string file = "# team keys\n"
                           "\n"
                           "  alice@example.com,test@example " + pub.to_text() + "\n"
                           "\"bob smith@example.com\" namespaces=\"file\" " + other.to_text() + "\r\n"
                           "carol@example.com " + rsa_line +
                           "*@example.com NAMESPACES=\"git,file\" " + other.to_text() + " second line\n"
                           "\t# indented comment";
  const auto signers = kistore::parse_allowed_signers(file, "allowed");
  REQUIRE(signers.size() == 4);
  CHECK(signers[0].principals == std::vector<std::string>{"alice@example.com", "test@example"});
  CHECK(signers[0].options.empty());
  CHECK(signers[0].key == pub);
  CHECK(signers[1].principals == std::vector<std::string>{"bob smith@example.com"});
  CHECK(signers[1].options == "namespaces=\"file\"");
  CHECK(signers[2].key.type == "ssh-rsa");
  CHECK(signers[3].options == "NAMESPACES=\"git,file\"");
  CHECK(signers[3].key.comment == "test@example second line");

  const std::string rendered = kistore::render_allowed_signers(signers);
  CHECK(kistore::parse_allowed_signers(rendered, "rendered") == signers);
  CHECK(kistore::render_allowed_signers(kistore::parse_allowed_signers(rendered, "rendered")) == rendered);
  CHECK(rendered.substr(0, rendered.find('\n')) == "alice@example.com,test@example " + pub.to_text());
  CHECK(rendered.find("\n\"bob smith@example.com\" namespaces=\"file\" ssh-ed25519 ") != std::string::npos);

  SECTION("find_signer") {
    CHECK(kistore::find_signer(signers, pub) == &signers[0]);
    SshPublicKey no_comment = pub;
    no_comment.comment = "something else";
    CHECK(kistore::find_signer(signers, no_comment) == &signers[0]);
    // `other` is listed for "file" only on line 2, and for git,file on line 4.
    CHECK(kistore::find_signer(signers, other) == &signers[3]);
    CHECK(kistore::find_signer(signers, other, "file") == &signers[1]);
    CHECK(kistore::find_signer({signers[1]}, other) == nullptr);
    CHECK(kistore::find_signer({}, pub) == nullptr);

    AllowedSigner negated{{"x@y"}, "namespaces=\"!git,*\"", pub};
    CHECK(kistore::find_signer({negated}, pub) == nullptr);
    CHECK(kistore::find_signer({negated}, pub, "file") != nullptr);
    AllowedSigner wildcard{{"x@y"}, "namespaces=\"g?t\"", pub};
    CHECK(kistore::find_signer({wildcard}, pub) != nullptr);
    AllowedSigner hand_made{{"x@y"}, "cert-authority", pub};  // never grants trust
    CHECK(kistore::find_signer({hand_made}, pub) == nullptr);
  }

  SECTION("ssh-keygen reads the rendered file and agrees with find_signer") {
    s.write("allowed", rendered);
    s.write("payload", "data\n");
    const SshPrivateKey other_key = s.key("other");
    for (const std::string ns : {"git", "file", "email"}) {
      s.write("sig", other_key.sign("data\n", ns));
      const AllowedSigner* found = kistore::find_signer(signers, other, ns);
      // Both lines that list `other` match this principal, so ssh-keygen's
      // answer turns on the namespaces options alone, as find_signer's does.
      INFO("namespace " << ns);
      Ran r = s.run("ssh-keygen -Y verify -f allowed -I 'bob smith@example.com' -n " + ns +
                    " -s sig < payload");
      CHECK((r.exit_code == 0) == (found != nullptr));
    }
  }

  SECTION("bad lines") {
    const std::string key = pub.to_text();
    struct Bad {
      std::string line;
      const char* error;
    };
    const std::vector<Bad> bad = {
        {"alice@example.com", "f:2: expected a key after the principals, found nothing"},
        {"alice@example.com,," + std::string(" ") + key, "f:2: expected comma-separated principals"},
        {"\"alice@example.com " + key, "f:2: the quoted principals have no closing '\"'"},
        {"al\"ice\"@example.com " + key, "f:2: expected principals without '\"'"},
        {"a@b no-touch-required " + key, "f:2: expected an option namespaces=\"...\", valid-after=\"...\", "
                                         "valid-before=\"...\" or cert-authority, found \"no-touch"},
        {"a@b namespaces=git " + key, "f:2: expected a double-quoted list after namespaces="},
        {"a@b namespaces=\"git\",namespaces=\"file\" " + key, "f:2: expected one namespaces option"},
        {"a@b namespaces=\"git\"", "f:2: expected a key type (such as ssh-ed25519) after the options"},
        {"a@b namespaces=\"git\" AAAAC3Nza", "f:2: expected a key type (such as ssh-ed25519), found"},
        {"a@b ssh-ed25519", "f:2: expected base64 key data after ssh-ed25519, found nothing"},
        {"a@b ssh-rsa " + key.substr(12), "f:2: key data says its type is \"ssh-ed25519\", the line says ssh-rsa"},
    };
    for (const Bad& b : bad) {
      INFO(b.line);
      CHECK(error_of([&] { kistore::parse_allowed_signers("# first\n" + b.line, "f"); })
                .find(b.error) == 0);
    }
  }

  SECTION("every truncation parses or is refused as invalid input") {
    for (std::size_t n = 0; n < file.size(); ++n) {
      INFO("first " << n << " bytes");
      try {
        kistore::parse_allowed_signers(file.substr(0, n), "allowed");
      } catch (const kistore::Error& e) {
        CHECK(e.code() == kistore::ErrorCode::kInvalidInput);
      }
    }
  }

  SECTION("render refuses what it cannot write back") {
    CHECK(error_of([&] { kistore::render_allowed_signers({{{}, "", pub}}); })
              .find("expected at least one principal") != std::string::npos);
    CHECK(error_of([&] { kistore::render_allowed_signers({{{"a,b"}, "", pub}}); })
              .find("a principal cannot hold ','") != std::string::npos);
    CHECK(error_of([&] { kistore::render_allowed_signers({{{"a"}, "bogus", pub}}); })
              .find("expected an option namespaces=") != std::string::npos);
    // A leading '#' would make a comment line: render quotes it.
    const std::vector<AllowedSigner> hash{{{"#ops"}, "", pub}};
    CHECK(kistore::parse_allowed_signers(kistore::render_allowed_signers(hash), "x") == hash);
  }
}

TEST_CASE("git verify-commit accepts a commit signed by kistore, byte-identical to git's own", "[ssh]") {
  Scratch s;
  s.keygen("k");
  s.keygen("stranger");
  s.write("allowed", "test@example " + s.read("k.pub"));
  const std::string git = "GIT_AUTHOR_DATE='2024-01-02T03:04:05Z' GIT_COMMITTER_DATE='2024-01-02T03:04:05Z' "
                          "git -C repo -c user.name=Test -c user.email=test@example ";
  s.must("git init -q repo && echo hello > repo/f && git -C repo add f");
  s.must(git + "-c commit.gpgsign=false commit -q -m 'first commit'");
  const std::string payload = s.must("git -C repo cat-file commit HEAD");

  // The signed commit object: a gpgsig header after the committer line, the
  // armor without its final newline, continuation lines indented by a space.
  auto signed_commit = [&](const std::string& armored) {
    std::string header = "gpgsig " + replace_all(armored.substr(0, armored.size() - 1), "\n", "\n ") + "\n";
    std::size_t committer = payload.find("\ncommitter ");
    REQUIRE(committer != std::string::npos);
    std::size_t after = payload.find('\n', committer + 1) + 1;
    return payload.substr(0, after) + header + payload.substr(after);
  };
  const SshPrivateKey key = s.key("k");
  const std::string commit = signed_commit(key.sign(payload));
  s.write("commit", commit);
  const std::string id = s.must("git -C repo hash-object -t commit -w --stdin < commit").substr(0, 40);

  Ran verified = s.run("git -C repo -c gpg.ssh.allowedSignersFile=../allowed verify-commit " + id);
  INFO(verified.err);
  CHECK(verified.exit_code == 0);
  CHECK(verified.err.find("Good \"git\" signature for test@example") != std::string::npos);

  // git signing the same commit itself writes the same bytes.
  s.must(git + "-c gpg.format=ssh -c user.signingkey=" + sh_quote(s.path("k")) +
         " commit -q -S --amend -m 'first commit'");
  CHECK(s.must("git -C repo cat-file commit HEAD") == commit);

  // And kistore verifies the signature git wrote, taken back out of the commit.
  const std::size_t begin = commit.find("gpgsig ") + 7, end = commit.find("-----END SSH SIGNATURE-----");
  const std::string extracted =
      replace_all(commit.substr(begin, end - begin), "\n ", "\n") + "-----END SSH SIGNATURE-----";
  CHECK(kistore::verify_signature(extracted, payload).valid);

  // A key that is not in the allowed signers file does not pass.
  s.write("commit2", signed_commit(s.key("stranger").sign(payload)));
  const std::string id2 = s.must("git -C repo hash-object -t commit -w --stdin < commit2").substr(0, 40);
  CHECK(s.run("git -C repo -c gpg.ssh.allowedSignersFile=../allowed verify-commit " + id2).exit_code != 0);
}
