#include "store/git/commit_graph.h"

#include "objects/error.h"

namespace kistore::git {

CommitId parse_commit_id(const std::string& text) {
  std::optional<CommitId> id = CommitId::parse(text);
  if (!id) throw Error(ErrorCode::kIO, "not a git object id: \"" + text + "\"");
  return *id;
}

CommitInfo CommitGraph::read(const CommitId& id) {
  std::string why;
  std::optional<CommitInfo> c = find(id, &why);
  if (!c) throw Error(ErrorCode::kIO, "reading commit " + id.hex() + ": " + why);
  return std::move(*c);
}

namespace {

class RepositoryCommits final : public CommitGraph {
 public:
  explicit RepositoryCommits(git_repository* repo) : repo_(repo), odb_(open_odb(repo)) {}

  std::optional<CommitInfo> find(const CommitId& id, std::string* why) override {
    const git_oid oid = to_oid(id);
    git_commit* raw = nullptr;
    if (git_commit_lookup(&raw, repo_, &oid) < 0) {
      if (why) *why = last_error();
      git_error_clear();
      return std::nullopt;
    }
    Commit c(raw);
    CommitInfo out{id};
    out.tree = *git_commit_tree_id(raw);
    for (unsigned i = 0; i < git_commit_parentcount(raw); ++i) out.parents.push_back(to_commit_id(*git_commit_parent_id(raw, i)));
    const git_signature* author = git_commit_author(raw);
    out.author_name = author->name;
    out.author_email = author->email;
    out.author_time = author->when.time;
    out.author_offset_minutes = author->when.offset;
    out.committer_time = git_commit_time(raw);
    if (const char* m = git_commit_message(raw)) out.message = m;
    if (const char* s = git_commit_summary(raw)) out.summary = s;
    return out;
  }

  CommitSignature signature(const CommitId& id) override {
    CommitSignature out;
    commit_signature(repo_, to_oid(id), out.signature, out.payload);
    return out;
  }

  std::string walk(const AncestorWalk& w, const std::function<bool(const CommitId&)>& visit) override {
    git_revwalk* raw = nullptr;
    check(git_revwalk_new(&raw, repo_), w.what);
    Revwalk walk(raw);
    switch (w.order) {
      case WalkOrder::kAny: break;
      case WalkOrder::kTopological: git_revwalk_sorting(raw, GIT_SORT_TOPOLOGICAL); break;
      case WalkOrder::kTimeTopological: git_revwalk_sorting(raw, GIT_SORT_TIME | GIT_SORT_TOPOLOGICAL); break;
    }
    for (const CommitId& c : w.from) {
      const git_oid oid = to_oid(c);
      check(git_revwalk_push(raw, &oid), w.what);
    }
    for (const CommitId& c : w.hidden) {
      const git_oid oid = to_oid(c);
      check(git_revwalk_hide(raw, &oid), w.what);
    }
    git_oid id;
    int rc;
    while ((rc = git_revwalk_next(&id, raw)) == 0)
      if (!visit(to_commit_id(id))) return "";
    if (rc == GIT_ITEROVER) return "";
    std::string why = last_error();
    git_error_clear();
    return why;
  }

  std::optional<bool> descends_from(const CommitId& commit, const CommitId& ancestor) override {
    const git_oid c = to_oid(commit), a = to_oid(ancestor);
    int rc = git_graph_descendant_of(repo_, &c, &a);
    git_error_clear();
    if (rc < 0) return std::nullopt;
    return rc == 1;
  }

  std::optional<CommitId> merge_base(const CommitId& a, const CommitId& b) override {
    const git_oid x = to_oid(a), y = to_oid(b);
    git_oid base;
    const bool found = git_merge_base(&base, repo_, &x, &y) == 0;
    git_error_clear();
    if (!found) return std::nullopt;
    return to_commit_id(base);
  }

  std::unique_ptr<TreeReader> trees(TreeReader::Options options) override {
    options.packs = nullptr;
    return std::make_unique<TreeReader>(odb_.get(), options);
  }

  std::optional<std::string> blob(const git_oid& id, std::size_t max) override {
    std::size_t size = 0;
    git_object_t type;
    check(git_odb_read_header(&size, &type, odb_.get(), &id), "reading blob " + oid_str(id));
    if (size > max || type != GIT_OBJECT_BLOB) return std::nullopt;
    git_odb_object* raw = nullptr;
    check(git_odb_read(&raw, odb_.get(), &id), "reading blob " + oid_str(id));
    OdbObject object(raw);
    return std::string(static_cast<const char*>(git_odb_object_data(raw)), git_odb_object_size(raw));
  }

 private:
  git_repository* repo_;
  Odb odb_;
};

}  // namespace

std::unique_ptr<CommitGraph> repository_commits(git_repository* repo) { return std::make_unique<RepositoryCommits>(repo); }

WalkResult check_commit_tree_shape(git_repository* repo, const CommitId& commit, const std::string& label) {
  git_repository* raw_repo = nullptr;
  const std::string dir = git_repository_path(repo);
  check(git_repository_open_ext(&raw_repo, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr), dir + ": opening for reading");
  Repository own(raw_repo);
  const git_oid head = to_oid(commit);
  git_commit* raw = nullptr;
  check(git_commit_lookup(&raw, raw_repo, &head), "reading the head commit " + commit.hex());
  Commit c(raw);
  StoreTreeSource source(raw_repo);
  return check_tree_shape(source, *git_commit_tree_id(raw), label);
}

}  // namespace kistore::git
