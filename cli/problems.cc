#include "cli/problems.h"

#include <cstdio>
#include <string>

#include "cli/output/terminal.h"

namespace kistore::cli {

Json problems_json(const std::vector<Problem>& problems) {
  Json out = Json::array();
  for (const Problem& p : problems) {
    Json o = Json::object();
    o.set("kind", std::string(problem_kind_name(p.kind)));
    o.set("path", p.path);
    o.set("detail", p.detail);
    out.push_back(std::move(o));
  }
  return out;
}

void print_problems(const char* label, const std::vector<Problem>& problems) {
  for (const Problem& p : problems) {
    std::string kind(problem_kind_name(p.kind));
    std::fprintf(stderr, "%s: %s: %s: %s\n", label, kind.c_str(), shown(p.path).c_str(), shown_message(p.detail).c_str());
  }
}

}  // namespace kistore::cli
