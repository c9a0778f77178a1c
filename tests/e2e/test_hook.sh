#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# A shared repository guarded by `kistore hook pre-receive` (docs/hosting.md):
# git's receive-pack runs it before it takes a push, with the pushed objects
# still in git's quarantine. kistore's own pushes are taken; what stock git
# pushes that would break the store is refused with the reasons, shown to the
# pusher as remote: lines, and the server's branch does not move:
#   (a) a README.md added by a plain `git push`;
#   (b) a run given a reproduced level line with no signed rerun;
#   (c) a forced push that drops the head;
#   (d) a second branch, and the deletion of the store's.
# Every kistore store that pulls from the server afterwards stays whole.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). A few seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in hook served
"$PY" "$SRC/bench/gen.py" 3 --out "$W/runs.jsonl" >/dev/null
split -l 1 -d -a 1 "$W/runs.jsonl" "$W/run_"
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$W/run_0"
SERVER=$W/served/ev.git
git init -q --bare -b main "$SERVER"
printf '#!/bin/sh\nexec %q hook pre-receive\n' "$KISTORE" >"$SERVER/hooks/pre-receive"
chmod +x "$SERVER/hooks/pre-receive"
start_git_daemon "$W/served"
URL=$GIT_DAEMON_URL/ev.git

assert_exit 0 ks --store "$S" push "$URL"
assert_contains "$ERR" "remote: kistore: 1 new commit, " "the hook checked the first push"
assert_exit 0 ks --store "$S" add "$W/run_1"
assert_exit 0 ks --store "$S" push "$URL"
assert_eq "$(head_of "$S")" "$(head_of "$SERVER")" "the server took both pushes"
pass "kistore's own pushes pass the hook, which says what it checked"

# refused GIT-ARGS... : a stock git push from the clone $C; exit non-zero with
# "pre-receive hook declined", the server's branch where it was. $ERR holds
# what git printed.
refused() {
    local before rc=0
    before=$(head_of "$SERVER")
    ERR=$(git -C "$C" push "$@" 2>&1) || rc=$?
    [[ $rc != 0 ]] || fail "git push $* was taken"
    assert_contains "$ERR" "pre-receive hook declined" "git push $*: the hook declined it"
    assert_eq "$before" "$(head_of "$SERVER")" "git push $*: the server's branch did not move"
}

# (a) a README with stock git.
C=$W/checkout
git clone -q "$URL" "$C"
echo "Evidence for the lab." >"$C/README.md"
git -C "$C" add README.md
git -C "$C" commit -q -m "a readme"
refused origin main
assert_contains "$ERR" "remote: problem: layout: README.md" "the pusher sees the path and why"
assert_contains "$ERR" "kistore: push refused: 1 problem;" "and kistore's summary"
pass "(a) a README.md pushed with stock git is refused, naming it; the branch stays"

# (b) a level no controller signed: a run at its default level (format 3: no
# line in refs/levels) given a "reproduced" line by hand, its evidence the
# other run (no rerun at all, let alone a signed one).
git -C "$C" reset -q --hard origin/main
runs=$(index_keys "$C/.git" groups | cut -c65-)
[[ $(nlines "$runs") == 2 ]] || fail "expected two runs in the store's groups, got: $runs"
run=$(sed -n 1p <<<"$runs") other=$(sed -n 2p <<<"$runs")
[[ -z $(index_keys "$C/.git" levels) ]] || fail "the store already has a level line"
set_line "$C/.git" levels "$run" \
    "{\"@key\":\"$run\",\"evidence\":\"sha256:$other\",\"level\":\"reproduced\"}" |
    git -C "$C" update-index --index-info
git -C "$C" commit -q -m "reproduced, trust me"
refused origin HEAD:main
assert_contains "$ERR" "level-unjustified: refs/levels" "the pusher sees the unjustified level"
assert_contains "$ERR" " @$run: " "naming the run's key"
pass "(b) a level moved to reproduced with no signed rerun is refused; the branch stays"

# (c) a forced push that drops the head.
git -C "$C" reset -q --hard 'origin/main~1'
refused --force origin HEAD:main
assert_contains "$ERR" "history-rewritten" "the pusher sees why"
pass "(c) a forced push that drops the store's head is refused"

# (d) a second branch; deleting the store's.
git -C "$C" reset -q --hard origin/main
refused origin HEAD:refs/heads/other
assert_contains "$ERR" "a kistore store is the one branch its HEAD names" "a second branch: says why"
refused origin :main
assert_contains "$ERR" "deletes the store's branch" "a deletion: says why"
pass "(d) a second branch and the deletion of the store's branch are refused"

# (e) an empty folder, at the root and inside the index: kistore writes none,
# and a store holding one cannot be written by the stores that clone it.
git -C "$C" reset -q --hard origin/main
empty=$(git -C "$C" mktree </dev/null)
with_empty() {  # with_empty junk|refs/junk : HEAD's tree with an empty folder there (git mktree)
    local folder=$1 refs
    if [[ $folder == junk ]]; then
        { git -C "$C" ls-tree HEAD; printf '040000 tree %s\tjunk\n' "$empty"; } | git -C "$C" mktree
    else
        refs=$({ git -C "$C" ls-tree HEAD:refs; printf '040000 tree %s\tjunk\n' "$empty"; } | git -C "$C" mktree)
        { git -C "$C" ls-tree HEAD | grep -v $'\trefs$'; printf '040000 tree %s\trefs\n' "$refs"; } | git -C "$C" mktree
    fi
}
for where in junk refs/junk; do
    tree=$(with_empty "$where")
    commit=$(git -C "$C" commit-tree "$tree" -p HEAD -m "an empty folder")
    refused origin "$commit:refs/heads/main"
    assert_contains "$ERR" "an empty folder" "$where: says what it is"
done
pass "(e) an empty folder, at the root or below refs/, is refused"

# (f) trees smuggled beside a harmless commit (a raw receive-pack push: the
# pack carries objects no ref reaches), then a stock push of a commit on
# them: being in the server's object folder is no proof of having been
# checked, so the second push is walked and refused.
head=$(git -C "$C" rev-parse HEAD)
meta=$(git -C "$C" ls-tree -r --name-only HEAD refs/metadata | head -1)
[[ -n $meta ]] || meta=$(git -C "$C" ls-tree -r --name-only HEAD refs/levels | head -1)
git -C "$C" update-index --chmod=+x "$meta"
bad_tree=$(git -C "$C" write-tree)
git -C "$C" reset -q --hard
harmless=$(git -C "$C" commit-tree "HEAD^{tree}" -p HEAD -m "nothing changes")
# shellcheck disable=SC2046
(cd "$C" && "$PY" "$here/lib/raw_receive_pack.py" 127.0.0.1 "$GIT_DAEMON_PORT" /ev.git "$head" "$harmless" \
    refs/heads/main "$harmless" $(git rev-list --objects "$bad_tree" --not HEAD | cut -d' ' -f1)) >"$W/raw.out" 2>&1 || true
assert_eq "$harmless" "$(head_of "$SERVER")" "the harmless commit was taken"
[[ $(git --git-dir="$SERVER" cat-file -t "$bad_tree") == tree ]] || fail "the bad tree was not smuggled in"
git -C "$C" fetch -q origin
on_bad=$(git -C "$C" commit-tree "$bad_tree" -p "$harmless" -m "on the smuggled tree")
refused origin "$on_bad:refs/heads/main"
assert_contains "$ERR" "mode 100755" "the smuggled executable is found"
pass "(f) trees smuggled in beside a harmless push are walked when a later push uses them, and refused"

# (g) a first push of an empty tree into an empty server repository.
git init -q --bare -b main "$W/served/fresh.git"
cp "$SERVER/hooks/pre-receive" "$W/served/fresh.git/hooks/pre-receive"
root=$(git -C "$C" commit-tree "$empty" -m "empty")
before=$(git --git-dir="$W/served/fresh.git" for-each-ref | wc -l)
ERR=$(git -C "$C" push "$GIT_DAEMON_URL/fresh.git" "$root:refs/heads/main" 2>&1) && fail "an empty tree was taken" || true
assert_contains "$ERR" "not a kistore store" "an empty first push: says it is no store"
assert_eq "$before" "$(git --git-dir="$W/served/fresh.git" for-each-ref | wc -l)" "no ref was made"
pass "(g) a first push of an empty tree into an empty server is refused as no store"

# Every store that pulls from the server stays whole.
assert_exit 0 ks clone "$URL" "$W/clone"
assert_exit 0 ks --store "$W/clone" verify
assert_exit 0 ks --store "$S" add "$W/run_2"
assert_exit 0 ks --store "$S" push "$URL"
assert_exit 0 ks --store "$W/clone" pull "$URL"
assert_exit 0 ks --store "$W/clone" verify
assert_exit 0 git --git-dir="$SERVER" fsck --strict --no-dangling
pass "after every refusal the server verifies in a clone, takes kistore's next push, and passes git fsck --strict"

# A server without the hook: a pull refuses the empty folder, and verify names
# one in a store's own head.
git clone -q --bare "$SERVER" "$W/unguarded.git"
git -C "$C" fetch -q origin
git -C "$C" reset -q --hard origin/main
tree=$(with_empty refs/junk)
commit=$(git -C "$C" commit-tree "$tree" -p "$(git --git-dir="$W/unguarded.git" rev-parse main)" -m "an empty folder")
git -C "$C" push -q "$W/unguarded.git" "$commit:refs/heads/main"
pull_refused "$W/clone" "$W/unguarded.git" "a pull of an empty folder" "an empty folder"
cp -r "$W/unguarded.git" "$W/hollow.git"
assert_exit 1 ks --store "$W/hollow.git" verify
assert_contains "$OUT$ERR" "refs/junk: " "verify names the empty folder"
assert_contains "$OUT$ERR" "an empty folder" "and says what it is"
pass "without the hook, a pull refuses an empty folder (store unchanged) and verify reports one"

# The hook's own input: what receive-pack would never write is exit 2.
OUT=$(printf 'not a ref line\n' | GIT_DIR=$SERVER "$KISTORE" hook pre-receive 2>&1) && rc=0 || rc=$?
assert_eq 2 "$rc" "a malformed ref line is bad input"
assert_contains "$OUT" "standard input, line 1: expected" "naming the line and what was expected"
pass "a hook input that is not receive-pack's: exit 2 naming the line"

summary
