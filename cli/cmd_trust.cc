#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/common.h"
#include "cli/terminal.h"
#include "objects/ssh_signature.h"
#include "store/trust.h"

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
      "  kistore trust path                    print the file's path");
  app->require_subcommand(1);
  auto* add = app->add_subcommand("add", "Trust a public key as a controller");
  auto* list = app->add_subcommand("list", "List the controllers");
  auto* remove = app->add_subcommand("remove", "Remove a controller");
  auto* path = app->add_subcommand("path", "Print the allowed-signers file's path");
  auto principal = std::make_shared<std::string>();
  auto keyfile = std::make_shared<std::string>();
  add->add_option("PRINCIPAL", *principal, "Who the key belongs to, e.g. alice@example.org")->required();
  add->add_option("KEY", *keyfile, "The public key file (ssh-ed25519 ...), e.g. id_ed25519.pub")->required();
  remove->add_option("PRINCIPAL", *principal, "The principal to remove")->required();
  return Command{app, [&g, add, list, remove, path, principal, keyfile]() -> int {
    Store store = open_store(g);
    std::vector<AllowedSigner> signers = load_trust(store);
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
      signers.push_back(AllowedSigner{{*principal}, "namespaces=\"git\"", key});
      save_trust(store, signers);
      note(g, "trusted " + shown(*principal) + " " + key.fingerprint());
      return kOk;
    }
    if (remove->parsed()) {
      std::size_t before = signers.size();
      std::erase_if(signers, [&](const AllowedSigner& s) {
        return s.principals.size() == 1 && s.principals.front() == *principal;
      });
      if (signers.size() == before) throw NotFound("PRINCIPAL \"" + *principal + "\" is not in the trust list");
      save_trust(store, signers);
      note(g, "removed " + shown(*principal));
      return kOk;
    }
    Json out = Json::array();
    std::string text;
    for (const AllowedSigner& s : signers) {
      std::string who;
      for (const auto& p : s.principals) who += (who.empty() ? "" : ",") + p;
      if (g.json) {
        Json j = Json::object();
        j.set("principal", who);
        j.set("fingerprint", s.key.fingerprint());
        j.set("key", s.key.to_text());
        out.push_back(std::move(j));
      } else {
        text += shown(who) + " " + s.key.fingerprint() + "\n";
      }
    }
    return print_listing(g, "controllers", std::move(out), text);
  }};
});

}  // namespace
}  // namespace kistore::cli
