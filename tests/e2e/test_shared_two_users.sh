#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# A repository shared by a group (`git init --bare --shared=group`, as a
# team's server folder is made), written by two real Unix users of that group
# in turn, with kistore and with stock git, each writing into the folders,
# objects and ref the other made:
#   (a) one pushes a store to it by path (its first push points HEAD at
#       main: kistore's own write there), two clones it, adds and pushes, one
#       pulls, adds and pushes again; two pushes a kistore commit with stock
#       `git push`; each adds directly into the shared repository too
#       (`kistore --store REPO add`: kistore's own writes, not receive-pack's);
#   (b) afterwards: `git fsck --strict` is clean, both users' stores verify
#       and hold every run, and every folder under objects/ and refs/ is
#       g+rwxs, every object and pack g+r, every ref g+rw (and HEAD), as
#       git's core.sharedRepository makes them;
#   (c) a third user, not in the group, is refused: a push is exit 4 naming
#       the repository and saying nothing was written, an add there exit 3;
#       the repository byte for byte as it was.
# The repository belongs to root and its group; each user's ~/.gitconfig
# lists it in safe.directory, as any real shared server's users need: git
# (since 2.35.2) and libgit2 refuse a repository that another user owns
# without it.
#
# Needs root (to make the users and the group: useradd, groupadd, setpriv of
# util-linux); elsewhere it says why and exits 77, which ctest counts as
# skipped. Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). About
# half a minute.
set -euo pipefail
if [[ $(id -u) != 0 ]]; then
    echo "SKIP: two users writing one shared repository needs root to make the users and their group (useradd, groupadd, setpriv); run it as root, as CI does"
    exit 77
fi
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

skip() {
    printf 'SKIP: %s\n' "$*"
    _TESTS_SUMMARY_DONE=1
    exit 77
}
for tool in useradd userdel groupadd groupdel setpriv; do
    have_tool "$tool" || skip "$tool is not installed (packages passwd and util-linux)"
done

work_in shared-two-users
W=$(pwd -P) # git's safe.directory compares the real path
chmod 755 "$W"

# ---- the group and the users, removed at exit -------------------------------------
# Names with this test's process id: parallel runs, and any real account, are
# left alone (only what this run made is removed).
GRP=kstg$$
ONE=ksto$$
TWO=kstt$$
OUTSIDER=ksts$$
MADE_USERS=()
MADE_GROUP=
remove_accounts() {
    [[ ${BASHPID:-$$} == "$_SERVERS_MAIN_PID" ]] || return 0
    local u
    for u in "${MADE_USERS[@]}"; do
        userdel "$u" >/dev/null 2>&1 || echo "cleanup: userdel $u failed" >&2
        rm -rf -- "${W:?}/home/$u"
    done
    MADE_USERS=()
    if [[ -n $MADE_GROUP ]]; then
        groupdel "$MADE_GROUP" >/dev/null 2>&1 || echo "cleanup: groupdel $MADE_GROUP failed" >&2
        MADE_GROUP=
    fi
}
servers_on_exit remove_accounts
groupadd "$GRP" && MADE_GROUP=$GRP
mkdir -p "$W/home"
chmod 755 "$W/home"
R=$W/srv/evidence.git
# make_user NAME [GROUP] : an account with its own home (a private TMPDIR
# inside it), GROUP as a supplementary group, and a ~/.gitconfig that trusts
# the shared repository, as each user of a shared server sets it.
make_user() {
    local name=$1 home=$W/home/$1
    useradd -M -N -d "$home" -s /bin/sh ${2:+-G "$2"} "$name" && MADE_USERS+=("$name")
    mkdir -p "$home/tmp"
    git config --file "$home/.gitconfig" --add safe.directory "$R"
    chown -R "$name:" "$home"
    chmod 700 "$home"
}
make_user "$ONE" "$GRP"
make_user "$TWO" "$GRP"
make_user "$OUTSIDER"

# as USER CMD... : CMD run as USER (its uid, primary and supplementary groups),
# with umask 022 and only its own HOME, TMPDIR, PATH, LANG and KISTORE_AUTHOR
# (and the sanitizers' settings, where a sanitized build runs): nothing else
# of root's environment, no git identity.
as() {
    local who=$1 v
    shift
    local -a keep=()
    for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
        [[ -z ${!v:-} ]] || keep+=("$v=${!v}")
    done
    (
        umask 022
        exec setpriv --reuid="$who" --regid="$(id -g "$who")" --init-groups \
            env -i HOME="$W/home/$who" TMPDIR="$W/home/$who/tmp" PATH="$PATH" LANG=C.UTF-8 "${keep[@]}" \
            GIT_TERMINAL_PROMPT=0 KISTORE_AUTHOR="user $who <$who@example.invalid>" "$@"
    )
}
# The binary must be reachable by the other users: where it is not (a build
# folder under a private home), a copy in the test's own folder.
KS=$KISTORE
if ! as "$OUTSIDER" test -x "$KS"; then
    mkdir -p "$W/bin" && cp "$KISTORE" "$W/bin/kistore" && chmod 755 "$W/bin" "$W/bin/kistore"
    KS=$W/bin/kistore
fi
ks_as() { as "$1" "$KS" --no-progress "${@:2}"; }
as "$OUTSIDER" test -x "$KS" || fail "$KS cannot be run by another user"

# The runs each writes: distinct batches of the seed's group, readable by all.
mkdir -p "$W/runs"
# batch START COUNT NAME : runs/NAME.jsonl, and (but for the outsider's) their
# digests, computed by make_runs.py, in runs/digests.
batch() {
    mkruns --start "$1" --count "$2" --format jsonl >"$W/runs/$3.jsonl"
    [[ $3 == outsider ]] || mkruns --start "$1" --count "$2" --digests >>"$W/runs/digests"
}
batch 1 120 one-first  # over git's unpackLimit (100 objects): a pack
batch 200 2 two-first  # under it: loose objects
batch 300 2 one-second
batch 400 2 two-git
batch 500 2 two-direct
batch 600 2 one-direct
batch 700 1 outsider
chmod -R a+rX "$W/runs"

# The shared repository: root's, its group's to write. HEAD names master
# (git's default), so that the first push's HEAD (main) is kistore's write.
mkdir -p "$W/srv"
git -c init.defaultBranch=master init -q --bare --shared=group "$R"
chgrp -R "$GRP" "$R"
[[ $(git config --file "$R/config" core.sharedRepository) == 1 ]] || fail "git init --shared=group did not set core.sharedRepository"
pass "a group ($GRP), two members ($ONE, $TWO), one outsider ($OUTSIDER), a --shared=group repository owned by root:$GRP"

# ---- (a) writes by both, each into what the other made ----------------------------
S1=$W/home/$ONE/store
S2=$W/home/$TWO/store
assert_exit 0 ks_as "$ONE" init "$S1"
assert_exit 0 ks_as "$ONE" --store "$S1" add "$W/runs/one-first.jsonl"
assert_exit 0 ks_as "$ONE" --store "$S1" push "$R"
assert_eq "$(head_of "$S1")" "$(head_of "$R")" "$ONE's first push landed"
assert_eq refs/heads/main "$(git --git-dir="$R" symbolic-ref HEAD)" "the first push pointed HEAD at main"
[[ -n $(find "$R/objects/pack" -name '*.pack' -user "$ONE") ]] || fail "$ONE's first push left no pack of $ONE's"
pass "$ONE pushes a store of 120 runs to the shared repository by path (a pack, HEAD pointed at main)"

assert_exit 0 ks_as "$TWO" clone "$R" "$S2"
assert_eq "$(head_of "$R")" "$(head_of "$S2")" "$TWO's clone has the shared head"
assert_exit 0 ks_as "$TWO" --store "$S2" add "$W/runs/two-first.jsonl"
assert_exit 0 ks_as "$TWO" --store "$S2" push "$R"
assert_eq "$(head_of "$S2")" "$(head_of "$R")" "$TWO's push landed"
assert_eq "$TWO" "$(stat -c %U "$R/refs/heads/main")" "$TWO moved the ref $ONE made"
[[ -n $(find "$R/objects" -path '*/objects/??/*' -type f -user "$TWO") ]] || fail "$TWO's push left no loose objects of $TWO's"
pass "$TWO clones it, adds and pushes by path: $TWO's loose objects, the ref $ONE made moved by $TWO"

assert_exit 0 ks_as "$ONE" --store "$S1" pull "$R"
assert_eq "$(head_of "$R")" "$(head_of "$S1")" "$ONE pulled $TWO's push"
assert_exit 0 ks_as "$ONE" --store "$S1" add "$W/runs/one-second.jsonl"
assert_exit 0 ks_as "$ONE" --store "$S1" push "file://$R"
assert_eq "$(head_of "$S1")" "$(head_of "$R")" "$ONE's second push landed"
assert_eq "$ONE" "$(stat -c %U "$R/refs/heads/main")" "$ONE moved the ref $TWO wrote"
pass "$ONE pulls, adds and pushes again (file://): the ref $TWO wrote moved by $ONE"

# Stock git: a commit kistore made, pushed by `git push`.
assert_exit 0 ks_as "$TWO" --store "$S2" pull "$R"
assert_exit 0 ks_as "$TWO" --store "$S2" add "$W/runs/two-git.jsonl"
assert_exit 0 as "$TWO" git --git-dir="$S2" push -q "$R" main
assert_eq "$(head_of "$S2")" "$(head_of "$R")" "$TWO's git push landed"
assert_eq "$TWO" "$(stat -c %U "$R/refs/heads/main")" "$TWO's git push moved the ref"
pass "$TWO pushes a kistore commit with stock git push"

# kistore's own writes in the shared repository: an add straight into it, by
# each user in turn, the second into the folders and ref the first left.
assert_exit 0 ks_as "$TWO" --store "$R" add "$W/runs/two-direct.jsonl"
assert_eq "$TWO" "$(stat -c %U "$R/refs/heads/main")" "$TWO's add moved the ref"
assert_exit 0 ks_as "$ONE" --store "$R" add "$W/runs/one-direct.jsonl"
assert_eq "$ONE" "$(stat -c %U "$R/refs/heads/main")" "$ONE's add moved the ref $TWO's add wrote"
pass "each adds straight into the shared repository, the second after the first"

# ---- (b) what both left ---------------------------------------------------------------
assert_exit 0 ks_as "$ONE" --store "$S1" pull "$R"
assert_exit 0 ks_as "$TWO" --store "$S2" pull "$R"
assert_eq "$(head_of "$R")" "$(head_of "$S1")" "$ONE has the final head"
assert_eq "$(head_of "$R")" "$(head_of "$S2")" "$TWO has the final head"
assert_exit 0 as "$ONE" git --git-dir="$R" fsck --strict --no-progress
assert_exit 0 ks_as "$ONE" --store "$S1" verify
assert_exit 0 ks_as "$TWO" --store "$S2" verify
assert_exit 0 ks_as "$TWO" --store "$R" verify
for who in "$ONE" "$TWO"; do
    assert_exit 0 ks_as "$who" --store "$W/home/$who/store" ls --kind BenchmarkRun
    listed=$OUT
    while IFS= read -r digest; do
        assert_contains "$listed" "$digest" "$who's store lists run $digest"
    done <"$W/runs/digests"
done
assert_eq "$(wc -l <"$W/runs/digests")" "$(printf '%s\n' "$listed" | grep -c sha256:)" "the store lists those runs and no others"
pass "git fsck --strict is clean; both stores and the shared repository verify and hold both users' runs"

private=$(find "$R/objects" "$R/refs" -type d ! -perm -g+rwxs -printf '%p %M %u\n')
[[ -z $private ]] || fail "folders a group member could not write: $private"
private=$(find "$R/refs" "$R/HEAD" -type f ! -perm -g+rw -printf '%p %M %u\n')
[[ -z $private ]] || fail "refs a group member could not move: $private"
private=$(find "$R/objects" -type f ! -perm -g+r -printf '%p %M %u\n')
[[ -z $private ]] || fail "objects a group member could not read: $private"
private=$(find "$R" ! -group "$GRP" -printf '%p %g\n')
[[ -z $private ]] || fail "files outside the repository's group: $private"
for who in "$ONE" "$TWO"; do
    [[ -n $(find "$R/objects" -type d -user "$who") ]] || fail "no folder under objects/ is $who's (the test meant both to make some)"
done
pass "folders g+rwxs, objects and packs g+r, refs and HEAD g+rw, all of group $GRP, whoever made them"

# ---- (c) a user outside the group --------------------------------------------------------
S3=$W/home/$OUTSIDER/store
assert_exit 0 ks_as "$OUTSIDER" clone "$R" "$S3"
assert_exit 0 ks_as "$OUTSIDER" --store "$S3" add "$W/runs/outsider.jsonl"
for url in "$R" "file://$R"; do
    assert_exit_unchanged 4 "$R" "a push by a user outside the group ($url)" ks_as "$OUTSIDER" --store "$S3" push "$url"
    assert_contains "$ERR" "cannot push to $url" "the refusal names the repository"
    assert_contains "$ERR" "$R/objects: permission denied: kistore runs as $OUTSIDER (uid $(id -u "$OUTSIDER")), who may not create files in it (members of its group, $GRP (gid $(getent group "$GRP" | cut -d: -f3)), may write there)" \
        "the refusal says which folder, who runs it and which group may write"
    assert_contains "$ERR" "nothing was sent or written" "the refusal says nothing was written"
done
assert_exit_unchanged 3 "$R" "an add by a user outside the group" ks_as "$OUTSIDER" --store "$R" add "$W/runs/outsider.jsonl"
assert_contains "$ERR" "permission denied" "an add there: permission denied"
assert_contains "$ERR" "nothing was written" "an add there: says nothing was written"
pass "a user outside the group: push exit 4 and add exit 3, each naming the repository and saying nothing was written; the repository unchanged"

summary
