#include <cstdio>

#include "cli/common.h"
#include "cli/output/terminal.h"
#include "store/sync/sync.h"

namespace kistore::cli {
namespace {

bool registered = register_command([](CommandSpec& root, Globals& g) {
  auto* app = root.add_subcommand("remote", "Manage the git remotes this store syncs with");
  app->footer(
      "A remote is another copy of the store that push, pull and clone talk to, named for short\n"
      "(the usual name is origin). Its URL can be a folder path, file://, git://, ssh:// or\n"
      "http(s)://; a folder path is stored as an absolute path.\n\n"
      "  kistore remote add origin ssh://me@example.org/srv/evidence.git\n"
      "  kistore remote list\n"
      "  kistore remote remove origin\n\n"
      "A password written in a URL (https://user:password@host/...) is never stored nor printed:\n"
      "the config keeps the URL without it; give it as KISTORE_TOKEN (with KISTORE_TOKEN_URL, over\n"
      "https) when you push or pull\n"
      "(see `kistore push --help`).\n\n"
      "Exit status: 0 done, 2 bad name or URL, unknown remote, 3 the store cannot be written.");
  app->require_subcommand(1);
  struct Opts {
    std::string name, url;
  };
  auto o = std::make_shared<Opts>();
  auto* add = app->add_subcommand("add", "Add a remote NAME at URL");
  add->add_option("NAME", o->name, "Short name, e.g. origin")->required();
  add->add_option("URL", o->url, "Path, file://, git://, ssh:// or http(s):// URL")->required();
  auto* remove = app->add_subcommand("remove", "Remove the remote NAME");
  remove->alias("rm");
  remove->add_option("NAME", o->name, "The remote's name")->required();
  auto* list = app->add_subcommand("list", "List remotes with their URLs (passwords removed)");
  return Command{app, [&g, o, add, remove, list]() -> int {
    Store store = open_store(g);
    if (add->parsed()) {
      add_remote(store, o->name, o->url);
      if (!url_password(o->url).empty())
        note(g, "note: the password in the URL was not saved; give it as KISTORE_TOKEN (with KISTORE_TOKEN_URL, "
                "over https) when you push or pull");
      std::string url;
      for (const RemoteInfo& r : list_remotes(store))
        if (r.name == o->name) url = redact_url(r.url);
      if (g.json) {
        Json out = Json::object();
        out.set("name", o->name);
        out.set("url", url);
        print_json(out);
      } else {
        note(g, "added remote " + shown(o->name) + ": " + shown(url));
      }
    } else if (remove->parsed()) {
      remove_remote(store, o->name);
      if (g.json) {
        Json out = Json::object();
        out.set("removed", o->name);
        print_json(out);
      } else {
        note(g, "removed remote " + shown(o->name));
      }
    } else if (list->parsed()) {
      std::vector<RemoteInfo> remotes = list_remotes(store);
      if (g.json) {
        Json arr = Json::array();
        for (const RemoteInfo& r : remotes) {
          Json item = Json::object();
          item.set("name", r.name);
          item.set("url", redact_url(r.url));
          arr.push_back(std::move(item));
        }
        Json out = Json::object();
        out.set("remotes", std::move(arr));
        print_json(out);
      } else {
        for (const RemoteInfo& r : remotes) std::printf("%s\t%s\n", shown(r.name).c_str(), shown(redact_url(r.url)).c_str());
      }
    }
    return kOk;
  }};
});

}  // namespace
}  // namespace kistore::cli
