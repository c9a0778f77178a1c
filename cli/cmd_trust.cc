#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/common.h"
#include "cli/output/terminal.h"
#include "objects/ssh_signature.h"
#include "store/history/trust.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("trust", "Manage the controllers allowed to sign reruns");
  app->footer(
      "Controllers are the keys whose signed reruns may set a run's level to reproduced or\n"
      "disputed. They are kept in an allowed-signers file (git's gpg.ssh.allowedSignersFile\n"
      "format) inside this store's repository folder: local to this store, never pushed or pulled,\n"
      "so each reader decides whom to trust. `git -c gpg.ssh.allowedSignersFile=$(kistore trust\n"
      "path) verify-commit` checks the same signatures with stock git.\n\n"
      "  kistore trust add PRINCIPAL KEY.pub   trust the Ed25519 public key for PRINCIPAL\n"
      "  kistore trust list                    show the controllers\n"
      "  kistore trust remove PRINCIPAL        stop trusting PRINCIPAL's keys\n"
      "  kistore trust path                    print the file's path\n\n"
      "A line pasted from another allowed-signers file is honoured as `git verify-commit` honours\n"
      "it: namespaces=\"...\" must let in \"git\"; valid-after=\"YYYYMMDD[HHMM[SS]][Z]\" and\n"
      "valid-before=\"...\" bound the key's use, judged at each signed commit's committer time (Z:\n"
      "UTC, else this machine's time zone); a cert-authority line trusts nothing here (kistore\n"
      "verifies plain keys, not certificates).\n\n"
      "`trust remove PRINCIPAL` stops every key listed for PRINCIPAL: it removes every line that\n"
      "lists such a key, whatever its shape (PRINCIPAL alone, PRINCIPAL among others on one line,\n"
      "or the same key for someone else), because kistore trusts keys, not names. It says which\n"
      "lines it removed and keeps every other line, comments included, byte for byte.");
  app->require_subcommand(1);
  auto* add = app->add_subcommand("add", "Trust a public key as a controller");
  app->add_subcommand("list", "List the controllers");
  auto* remove = app->add_subcommand("remove", "Remove a controller");
  auto* path = app->add_subcommand("path", "Print the allowed-signers file's path");
  auto principal = std::make_shared<std::string>();
  auto keyfile = std::make_shared<std::string>();
  add->add_option("PRINCIPAL", *principal, "Who the key belongs to, e.g. alice@example.org")->required();
  add->add_option("KEY", *keyfile, "The public key file (ssh-ed25519 ...), e.g. id_ed25519.pub")->required();
  remove->add_option("PRINCIPAL", *principal, "The principal to remove")->required();
  return Command{app, [&g, add, remove, path, principal, keyfile]() -> int {
    Store store = open_store(g);
    const std::string file = trust_file(store);
    std::string text = load_trust_text(store);
    std::vector<AllowedSigner> signers = parse_allowed_signers(text, file);
    if (path->parsed()) {
      std::printf("%s\n", trust_file(store).c_str());
      return kOk;
    }
    if (add->parsed()) {
      if (principal->empty() || principal->find_first_of(" \t,\"") != std::string::npos)
        throw InvalidInput("PRINCIPAL: expected a name without spaces, commas or quotes, found \"" + *principal + "\"");
      std::ifstream in(*keyfile, std::ios::binary);
      if (!in) throw IOError(*keyfile + ": cannot open the public key file");
      std::stringstream ss;
      ss << in.rdbuf();
      SshPublicKey key = parse_public_key(ss.str(), *keyfile);
      for (const AllowedSigner& s : signers)
        if (s.key.blob == key.blob && s.principals == std::vector<std::string>{*principal}) {
          note(g, "already trusted: " + shown(*principal) + " " + key.fingerprint());
          return kOk;
        }
      // Appended, so that the lines already there (comments, pasted lines)
      // stay as they are.
      if (!text.empty() && text.back() != '\n') text += '\n';
      try {
        text += render_allowed_signers({AllowedSigner{{*principal}, "namespaces=\"git\"", key}});
      } catch (const Error& e) {
        throw Error(e.code(), *keyfile + ": " + e.what() + "; nothing was written");
      }
      save_trust_text(store, text);
      note(g, "trusted " + shown(*principal) + " " + key.fingerprint());
      return kOk;
    }
    if (remove->parsed()) {
      TrustRemoval removal = remove_principal(text, *principal, file);
      std::string notes;
      for (const TrustLineChange& n : removal.notes) notes += "; " + n.why;
      if (removal.removed.empty())
        throw NotFound(file + ": PRINCIPAL \"" + *principal + "\" is named on no line of the trust list" + notes +
                       "; `kistore trust list` shows the lines");
      save_trust_text(store, removal.text);
      if (g.json) {
        Json out = Json::object();
        out.set("removed", *principal);
        Json lines = Json::array();
        for (const TrustLineChange& c : removal.removed) {
          Json j = Json::object();
          j.set("line", static_cast<double>(c.line));
          j.set("text", c.text);
          j.set("why", c.why);
          lines.push_back(std::move(j));
        }
        out.set("lines", std::move(lines));
        Json kept = Json::array();
        for (const TrustLineChange& c : removal.notes) kept.push_back(c.why);
        out.set("notes", std::move(kept));
        out.set("file", file);
        print_json(out);
        return kOk;
      }
      std::string message = "removed " + shown(*principal) + " from " + shown(file) + ":";
      for (const TrustLineChange& c : removal.removed) message += "\n  " + shown(c.why);
      for (const TrustLineChange& c : removal.notes) message += "\n  note: " + shown(c.why);
      note(g, message);
      return kOk;
    }
    Json out = Json::array();
    std::string listing;
    for (const AllowedSigner& s : signers) {
      std::string who;
      for (const auto& p : s.principals) who += (who.empty() ? "" : ",") + p;
      // What the line's options do here, in words.
      const SignerOptions o = parse_signer_options(s.options, file + ":" + std::to_string(s.line));
      std::string caveat;
      if (o.cert_authority) caveat = "cert-authority: trusts nothing here, kistore verifies plain keys only";
      else if (s.key.type != "ssh-ed25519") caveat = "not an Ed25519 key: trusts nothing here";
      if (g.json) {
        Json j = Json::object();
        j.set("principal", who);
        j.set("fingerprint", s.key.fingerprint());
        j.set("key", s.key.to_text());
        j.set("line", static_cast<double>(s.line));
        if (!s.options.empty()) j.set("options", s.options);
        if (!caveat.empty()) j.set("note", caveat);
        out.push_back(std::move(j));
      } else {
        listing += shown(who) + " " + s.key.fingerprint() + (s.options.empty() ? "" : " " + shown(s.options)) +
                   (caveat.empty() ? "" : "  (" + shown(caveat) + ")") + "\n";
      }
    }
    return print_listing(g, "controllers", std::move(out), listing);
  }};
});

}  // namespace
}  // namespace kistore::cli
