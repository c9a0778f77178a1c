#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# A store that is the work tree of a plain `git clone` (SPEC §2): after every
# kistore write there (a pull of thousands of runs, add, import, attest) git
# sees the clone exactly at its HEAD: git status clean and up to date with
# origin/main, git diff-index quiet, the index listing what HEAD's tree holds,
# git fsck clean; also with an index of version 4 under feature.manyFiles.
# And git's safe checkout's rules: a file the user changed at a path the
# write changes is never overwritten, nor a file the user put where one is to
# be added; a link planted in the work tree gets nothing written through it;
# a pull killed with -9 in the middle leaves no index.lock that stops git,
# and the next write sweeps the temporary index it left.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
export KISTORE_AUTHOR="Work Tree <work-tree@example.org>"
work_in work_tree
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" import liger "$DATA/liger-sample.csv"
git init -q --bare "$W/served.git"
assert_exit 0 ks --store "$S" push "$W/served.git"

# in_step CLONE WHAT: git sees CLONE at its HEAD and nothing else. diff-index
# first: it trusts the index's file status as written (git status would
# refresh it).
in_step() {
    local c=$1 what=$2
    [[ ! -e $c/.git/index.lock ]] || fail "$what: .git/index.lock is left"
    git -C "$c" diff-index --quiet HEAD -- || fail "$what: git diff-index HEAD reports $(git -C "$c" diff-index --name-only HEAD | head -3)"
    assert_eq "$(git -C "$c" ls-tree -r HEAD | sed 's/ blob \([0-9a-f]*\)\t/ \1 0\t/')" "$(git -C "$c" ls-files -s)" \
        "$what: git ls-files -s is git ls-tree -r HEAD"
    assert_eq "" "$(git -C "$c" status --porcelain --untracked-files=all)" "$what: git status --porcelain"
    git -C "$c" fsck --no-progress --no-dangling >/dev/null 2>&1 || fail "$what: git fsck: $(git -C "$c" fsck 2>&1 | head -3)"
}
# changed FILTER: the paths the served repository's main changes since the
# clone's HEAD (A added, M modified), as git sees them.
changed() { git --git-dir="$W/served.git" diff --name-only --diff-filter="$1" "$(git -C "$W/clone" rev-parse HEAD)" main; }
# publish RUNS: adds RUNS to the store elsewhere and pushes them.
publish() { assert_exit 0 ks --store "$S" add "$1" && assert_exit 0 ks --store "$S" push "$W/served.git"; }

git clone -q "$W/served.git" "$W/clone"
in_step "$W/clone" "a fresh clone"

# ---- a pull of thousands of runs, add, import, attest in the clone ------------------
mkruns --start 100 --count 3000 >many.jsonl
publish many.jsonl
# git clone's index holds a cache tree (TREE); kistore's checkout writes none
# (libgit2's, which it leaves the unusual cases to, would keep it): the
# pull's checkout was kistore's own.
grep -q TREE "$W/clone/.git/index" || fail "the clone's index holds no cache tree to begin with"
(cd "$W/clone" && assert_exit 0 ks pull) || fail "pull into the clone"
! grep -q TREE "$W/clone/.git/index" || fail "the pull's checkout was not kistore's own"
in_step "$W/clone" "after a pull of 3,000 runs"
assert_eq "## main...origin/main" "$(git -C "$W/clone" status -sb | head -1)" "git status after the pull"
mkruns --start 5000 --count 1 >one.jsonl
(cd "$W/clone" && assert_exit 0 ks add "$W/one.jsonl") || fail "add in the clone"
in_step "$W/clone" "after add"
(cd "$W/clone" && assert_exit 0 ks import liger "$DATA/liger-sample.csv") || fail "import in the clone"
in_step "$W/clone" "after import"
(cd "$W/clone" && assert_exit 0 ks attest 628643ba --note "matches our numbers") || fail "attest in the clone"
in_step "$W/clone" "after attest"
(cd "$W/clone" && assert_exit 0 ks push) || fail "push from the clone"
assert_exit 0 ks --store "$S" pull "$W/served.git"
pass "a pull of 3,000 runs, add, import and attest in a plain clone: git status clean, diff-index quiet, ls-files = ls-tree, fsck clean"

# ---- an index of version 4 under feature.manyFiles ----------------------------------
git clone -q "$W/served.git" "$W/many"
git -C "$W/many" config feature.manyFiles true
git -C "$W/many" update-index --index-version 4
git -C "$W/many" status --porcelain >/dev/null  # writes the untracked cache (an UNTR extension)
mkruns --start 6000 --count 500 >v4.jsonl
publish v4.jsonl
(cd "$W/many" && assert_exit 0 ks pull) || fail "pull into the clone with a version-4 index"
assert_eq 4 "$(od -An -tu1 -j7 -N1 "$W/many/.git/index" | tr -d ' ')" "the index stays at version 4"
in_step "$W/many" "after a pull into a version-4 index with feature.manyFiles"
pass "an index of version 4 with the untracked cache (feature.manyFiles): still version 4, still clean after a pull"

# ---- a file the user changed where the pull writes -----------------------------------
(cd "$W/clone" && assert_exit 0 ks pull && assert_not_contains "$ERR" "left behind" "a pull that kept the work tree in step warns of nothing") ||
    fail "pull into the clone"
in_step "$W/clone" "after a pull"
mkruns --start 7000 --count 20 >mod.jsonl
publish mod.jsonl
target=$(changed M | head -1)
[[ -n $target ]] || fail "the pull modifies no file of the clone"
echo "my notes" >>"$W/clone/$target"
mine=$(sha256sum <"$W/clone/$target")
(cd "$W/clone" && assert_exit 0 ks pull &&
    assert_contains "$ERR" "warning: the work tree was left behind the store's branch" "a kept file is said") ||
    fail "pull into a clone with a changed file"
assert_eq "$mine" "$(sha256sum <"$W/clone/$target")" "the user's changed file $target"
assert_contains "$(git -C "$W/clone" diff --name-only)" "$target" "git diff shows the user's change"
git -C "$W/clone" checkout -q -- "$target" && git -C "$W/clone" reset -q --hard
in_step "$W/clone" "after git reset --hard"
pass "a file the user changed at a path the pull modifies is kept as the user left it"

# ---- an untracked file where a file is to be added -----------------------------------
mkruns --start 7100 --count 20 >add.jsonl
publish add.jsonl
target=$(changed A | head -1)
mkdir -p "$W/clone/$(dirname "$target")"
echo "mine" >"$W/clone/$target"
(cd "$W/clone" && assert_exit 0 ks pull &&
    assert_contains "$ERR" "warning: the work tree was left behind the store's branch" "a file in the way is said") ||
    fail "pull into a clone with a file in the way"
assert_eq "mine" "$(cat "$W/clone/$target")" "the user's untracked file at $target"
rm "$W/clone/$target" && git -C "$W/clone" reset -q --hard
in_step "$W/clone" "after git reset --hard"
pass "an untracked file where the pull adds one is kept as the user left it"

# ---- a link planted in the work tree --------------------------------------------------
mkdir "$W/outside"
mkruns --start 7200 --count 40 >link.jsonl
publish link.jsonl
planted=""
while read -r path; do  # a folder the pull makes: a link there is the attack
    case $path in objects/sha256/*/*/*) ;; *) continue ;; esac
    dir=$(dirname "$path")
    if [[ ! -e $W/clone/$dir ]]; then planted=$dir && break; fi
done < <(changed A)
[[ -n $planted ]] || fail "the pull makes no new folder"
ln -s "$W/outside" "$W/clone/$planted"
(cd "$W/clone" && assert_exit 0 ks pull &&
    assert_contains "$ERR" "warning: the work tree was left behind the store's branch" "a planted link is said") ||
    fail "pull into a clone with a planted link"
assert_eq "" "$(find "$W/outside" -mindepth 1)" "nothing written through the link $planted"
[[ -L $W/clone/$planted ]] || fail "the planted link was replaced"
rm "$W/clone/$planted" && git -C "$W/clone" reset -q --hard
in_step "$W/clone" "after git reset --hard"
# A folder that exists, moved away and a link put in its place (as
# objects/sha256/ab -> /tmp/outside): libgit2's checkout would write through
# it, so kistore's refuses and hands nothing on.
mkruns --start 7300 --count 40 >link2.jsonl
publish link2.jsonl
planted=""
while read -r path; do
    case $path in objects/sha256/*/*/*) ;; *) continue ;; esac
    dir=$(dirname "$(dirname "$path")")
    if [[ -d $W/clone/$dir ]]; then planted=$dir && break; fi
done < <(changed A)
[[ -n $planted ]] || fail "the pull adds no file below a folder the clone has"
mv "$W/clone/$planted" "$W/moved" && ln -s "$W/outside" "$W/clone/$planted"
(cd "$W/clone" && assert_exit 0 ks pull &&
    assert_contains "$ERR" "warning: the work tree was left behind the store's branch" "a link in place of a folder is said") ||
    fail "pull into a clone with a link in place of a folder"
assert_eq "" "$(find "$W/outside" -mindepth 1)" "nothing written through the link $planted"
rm "$W/clone/$planted" && mv "$W/moved" "$W/clone/$planted" && git -C "$W/clone" reset -q --hard
in_step "$W/clone" "after git reset --hard"
pass "a link planted at a folder the pull writes into, new or in place of one: nothing written through it"

# ---- kill -9 in the middle of a pull --------------------------------------------------
mkruns --start 10000 --count 3000 >kill.jsonl
publish kill.jsonl
cp -a "$W/clone" "$W/killed"
: >"$W/marker"
(cd "$W/killed" && exec "$KISTORE" --no-progress pull >/dev/null 2>&1) &
puller=$!
for _ in $(seq 1 2000); do  # until the checkout has written a file, or the pull is over
    [[ -n $(find "$W/killed/objects" -newer "$W/marker" -type f -print -quit) ]] && break
    kill -0 "$puller" 2>/dev/null || break
    sleep 0.005
done
kill -9 "$puller" 2>/dev/null || true
wait "$puller" 2>/dev/null || true
[[ ! -e $W/killed/.git/index.lock ]] || fail "kill -9 left .git/index.lock"
git -C "$W/killed" status --porcelain >/dev/null || fail "git status after the kill"
mkruns --start 20000 --count 1 >after.jsonl
(cd "$W/killed" && assert_exit 0 ks add "$W/after.jsonl") || fail "add after the kill"
assert_eq "" "$(find "$W/killed/.git" -maxdepth 1 -name 'tmp_index_kistore_*')" "temporary indexes after the next write"
git -C "$W/killed" reset -q --hard
in_step "$W/killed" "after the kill and git reset --hard"
pass "kill -9 in the middle of a pull into a clone: no index.lock left, git works, the next write sweeps what it left"

summary
