#!/usr/bin/env bash
# tests/e2e/test_sync.sh -- kistore remote/push/pull/clone against real git
# servers on loopback (a bare path, file://, git daemon, smart HTTP with and
# without basic auth, sshd), checked with stock git; divergent stores
# converging through merge commits; remotes forged with stock git refused
# with the local store left exactly as it was; auth, host-key and
# unreachable-remote failures.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs with no
# TTY and stdin closed, as root or not. Prints "N passed, 0 failed".
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

# Isolation: our own HOME (no ~/.ssh, no git config: the preamble), no agent.
export GIT_AUTHOR_NAME=forger GIT_AUTHOR_EMAIL=forger@example.invalid
export GIT_COMMITTER_NAME=forger GIT_COMMITTER_EMAIL=forger@example.invalid
export GIT_ASKPASS=/bin/false SSH_ASKPASS=/bin/false
unset SSH_AUTH_SOCK KISTORE_TOKEN KISTORE_DIR GIT_DIR GIT_WORK_TREE KISTORE_SSH_KNOWN_HOSTS
export KISTORE_AUTHOR="Alice <alice@example.org>"

FIXTURE=$SRC/tests/data/e2e/seed-run-tiled-geglu-backward.json
[[ -f $FIXTURE ]] || fail "fixture not found"

BASE=$SERVERS_DIR/repos
WORK=$SERVERS_DIR/work
mkdir -p "$BASE" "$WORK"
cd "$WORK"

# ks ARGS... : kistore, bounded, stdin closed.
ks() { timeout -k 2 60 "$KISTORE" "$@" </dev/null; }
g() { timeout -k 2 30 git "$@" </dev/null; }
# A git-dir view of a store (kistore stores are bare).
head_of() { git --git-dir="$1" rev-parse -q --verify refs/heads/main 2>/dev/null || echo none; }
tree_of() { git --git-dir="$1" ls-tree -r refs/heads/main 2>/dev/null | sha256sum | cut -c1-16; }

# variant N : a bundle like the fixture with its own run (other primary value
# and source id). Nothing references a run's own digest, so no digest in the
# bundle needs recomputing.
variant() {
    local n=$1 out=$WORK/bundle-$1.json
    sed -e "s/\"median\": 2606080/\"median\": $((2606080 + n * 1000))/" \
        -e "s|2025-11-11-06-22-57\"|2025-11-11-06-22-57-v$n\"|" "$FIXTURE" >"$out"
    printf '%s\n' "$out"
}
run_digest() { ks digest "$1" | awk '$2 == "BenchmarkRun" {print $1}'; }

# ---------------------------------------------------------------------------
start_git_daemon "$BASE"
start_http_git "$BASE"
HTTP_PLAIN=$HTTP_GIT_URL
start_http_git "$BASE" --auth alice 's3cret:pw'
HTTP_AUTH_HOSTPORT=${HTTP_GIT_URL#http://}
start_http_git "$BASE" --tls --auth alice 's3cret:pw'
HTTPS_AUTH_HOSTPORT=${HTTP_GIT_URL#https://}
HTTPS_CA=$HTTP_GIT_CA
start_sshd
export KISTORE_SSH_KNOWN_HOSTS=$SSH_KNOWN_HOSTS
pass "servers started (git daemon, http, http+auth, https+auth, sshd)"

# Store A with the seed run.
assert_exit 0 ks --store A init
assert_exit 0 ks --store A add "$FIXTURE"
SEED_RUN=$(run_digest "$FIXTURE")
[[ $SEED_RUN == sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0 ]] ||
    fail "seed run digest: $SEED_RUN"
pass "store A has the seed run"

# ---------------------------------------------------------------------------
# Every transport: push to an empty bare repository, check it with stock git,
# clone it back with kistore, verify.
transport() {
    local name=$1 url=$2 bare=$BASE/t-$1.git
    shift 2
    git init -q --bare -b main "$bare"
    # Keep what arrives as the pack it came in (not loose objects), to look at it.
    git --git-dir="$bare" config receive.unpackLimit 1
    assert_exit 0 ks --store A remote add "$name" "$url"
    assert_exit 0 env "$@" "$KISTORE" --store A push "$name"
    assert_contains "$OUT" "Pushed" "$name: push output"
    assert_eq "$(head_of A)" "$(head_of "$bare")" "$name: the remote has A's branch"
    assert_exit 0 git --git-dir="$bare" fsck --strict --no-progress
    # The pack is kistore's own, not one libgit2's packbuilder deflated
    # again (every entry at its default level: 789c only): documents and
    # trees stored, commits and the index's files at level 1 (7801 for
    # both), as a push writes them (new_objects.h, objwrite.h blob_level).
    assert_eq '7801' "$(python3 "$SRC/tests/e2e/lib/pack_zlib_headers.py" "$bare"/objects/pack/*.pack)" \
        "$name: the remote got kistore's pack"
    rm -rf "$WORK/stock-$name"
    assert_exit 0 g clone -q "$bare" "$WORK/stock-$name"
    [[ -d $WORK/stock-$name/objects/sha256 && -f $WORK/stock-$name/FORMAT && -d $WORK/stock-$name/refs/groups ]] ||
        fail "$name: stock git clone has no store layout"
    assert_exit 0 env "$@" "$KISTORE" --json clone "$url" "$WORK/clone-$name"
    assert_contains "$OUT" '"result":"fast-forward"' "$name: clone --json"
    assert_eq "$(head_of A)" "$(head_of "$WORK/clone-$name")" "$name: clone has A's branch"
    assert_exit 0 ks --store "$WORK/clone-$name" verify
    # second push with nothing new
    assert_exit 0 env "$@" "$KISTORE" --store A push "$name"
    assert_contains "$OUT" "up to date" "$name: second push"
    pass "$name: push, git fsck --strict, stock git clone, kistore clone, verify ($(redact "$url"))"
}
redact() { sed -E 's#(://[^:/@]*):[^@/]*@#\1@#' <<<"$1"; }

transport path "$BASE/t-path.git"
transport file "file://$BASE/t-file.git"
transport daemon "$GIT_DAEMON_URL/t-daemon.git"
transport http "$HTTP_PLAIN/t-http.git"
# A password in the URL is not stored: the token supplies it to push (clone
# uses the URL's own). The token goes only over https, to the URL prefix
# KISTORE_TOKEN_URL names; the server's self-signed certificate is trusted
# through KISTORE_SSL_CAINFO.
https_token=(KISTORE_TOKEN='s3cret:pw' KISTORE_TOKEN_URL="https://$HTTPS_AUTH_HOSTPORT/" KISTORE_SSL_CAINFO="$HTTPS_CA")
transport authurl "https://alice:s3cret%3Apw@$HTTPS_AUTH_HOSTPORT/t-authurl.git" "${https_token[@]}"
assert_eq "https://alice@$HTTPS_AUTH_HOSTPORT/t-authurl.git" "$(git --git-dir=A config remote.authurl.url)" \
    "remote add keeps the URL without its password"
transport token "https://alice@$HTTPS_AUTH_HOSTPORT/t-token.git" "${https_token[@]}"
transport ssh "$SSH_URL_PREFIX$BASE/t-ssh.git"

# Passwords never show: remote list, errors.
assert_exit 0 ks --store A remote list
assert_contains "$OUT" "https://alice@$HTTPS_AUTH_HOSTPORT/t-authurl.git" "remote list shows the URL"
assert_not_contains "$OUT" "s3cret" "remote list hides the password"
assert_exit 0 ks --store A --json remote list
assert_not_contains "$OUT" "s3cret" "remote list --json hides the password"
pass "remote list never prints passwords"

# ---------------------------------------------------------------------------
# Authentication failures: exit 4, bounded, no secret printed.
git init -q --bare -b main "$BASE/t-deny.git"
assert_exit 0 ks --store A remote add badpw "http://alice:wrong@$HTTP_AUTH_HOSTPORT/t-deny.git"
assert_exit 4 ks --store A push badpw
assert_contains "$ERR" "authentication failed" "wrong password: message"
assert_not_contains "$ERR" "wrong" "wrong password: not printed"
assert_exit 4 ks --store A pull badpw
assert_contains "$ERR" "authentication failed" "wrong password on pull"
assert_exit 0 ks --store A remote add nocred "http://$HTTP_AUTH_HOSTPORT/t-deny.git"
assert_exit 4 ks --store A push nocred
assert_contains "$ERR" "KISTORE_TOKEN" "no credentials: says how to give them"
assert_exit 4 env KISTORE_TOKEN=not-the-token "$KISTORE" --store A push nocred
assert_contains "$ERR" "authentication failed" "wrong token"
assert_not_contains "$ERR" "not-the-token" "wrong token: not printed"
assert_eq "none" "$(head_of "$BASE/t-deny.git")" "refused pushes wrote nothing"
pass "http auth: wrong password, no credentials, wrong token -> exit 4, secrets not printed"

# ssh: wrong key, unknown host key.
ssh-keygen -q -t ed25519 -N '' -f "$WORK/wrong_key" </dev/null >/dev/null
assert_exit 4 env KISTORE_SSH_KEY="$WORK/wrong_key" "$KISTORE" --store A push ssh
assert_contains "$ERR" "authentication failed" "ssh wrong key"
assert_exit 4 env -u KISTORE_SSH_KNOWN_HOSTS "$KISTORE" --store A push ssh
assert_contains "$ERR" "is not known" "ssh unknown host: message"
assert_contains "$ERR" "ssh-keyscan -p $SSH_PORT" "ssh unknown host: says how to add it"
# a known_hosts that records another key for the host: refused as changed
printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$WORK/wrong_key.pub")" >"$WORK/bad_known_hosts"
assert_exit 4 env KISTORE_SSH_KNOWN_HOSTS="$WORK/bad_known_hosts" "$KISTORE" --store A push ssh
assert_contains "$ERR" "CHANGED" "ssh changed host key"
# ~/.ssh/known_hosts is honoured too
mkdir -p "$HOME/.ssh" && cp "$SSH_KNOWN_HOSTS" "$HOME/.ssh/known_hosts"
assert_exit 0 env -u KISTORE_SSH_KNOWN_HOSTS "$KISTORE" --store A push ssh
rm -f "$HOME/.ssh/known_hosts"
pass "ssh: wrong key, unknown host, changed host key -> exit 4; ~/.ssh/known_hosts accepted"

# known_hosts by OpenSSH's rules (sshd(8) SSH_KNOWN_HOSTS FILE FORMAT).
server_key=$(awk 'NF >= 3 { print $2, $3; exit }' "$SSH_KNOWN_HOSTS")
[[ $server_key == ssh-* ]] || fail "the test sshd's known_hosts has a key: $(cat "$SSH_KNOWN_HOSTS")"
kh=$WORK/kh
# @revoked for the server's key refuses it, even beside a valid entry (before or after it)
{ cat "$SSH_KNOWN_HOSTS"; printf '@revoked [127.0.0.1]:%s %s\n' "$SSH_PORT" "$server_key"; } >"$kh.revoked"
assert_exit 4 env KISTORE_SSH_KNOWN_HOSTS="$kh.revoked" "$KISTORE" --store A push ssh
assert_contains "$ERR" "REVOKED at $kh.revoked:" "revoked host key: message names the entry"
# ... and in ~/.ssh/known_hosts while KISTORE_SSH_KNOWN_HOSTS lists the key as valid
printf '@revoked * %s\n' "$server_key" >"$HOME/.ssh/known_hosts"
assert_exit 4 ks --store A push ssh
assert_contains "$ERR" "REVOKED" "a revoked key in ~/.ssh/known_hosts wins over a valid entry elsewhere"
rm -f "$HOME/.ssh/known_hosts"
# a port-less entry does not name a server on another port
printf '127.0.0.1 %s\n' "$server_key" >"$kh.portless"
assert_exit 4 env KISTORE_SSH_KNOWN_HOSTS="$kh.portless" "$KISTORE" --store A push ssh
assert_contains "$ERR" "[127.0.0.1]:$SSH_PORT is not known" "port-less entry: the host on port $SSH_PORT is unknown"
cp "$kh.portless" "$HOME/.ssh/known_hosts"
assert_exit 4 env -u KISTORE_SSH_KNOWN_HOSTS "$KISTORE" --store A push ssh
assert_contains "$ERR" "is not known" "port-less entry in ~/.ssh/known_hosts: unknown too"
rm -f "$HOME/.ssh/known_hosts"
# @cert-authority lines are not host keys: still unknown
printf '@cert-authority [127.0.0.1]:%s %s\n' "$SSH_PORT" "$server_key" >"$kh.ca"
assert_exit 4 env KISTORE_SSH_KNOWN_HOSTS="$kh.ca" "$KISTORE" --store A push ssh
assert_contains "$ERR" "is not known" "@cert-authority: not taken as the host's key"
# hashed entries (ssh-keygen -H) are honoured, in either file
cp "$SSH_KNOWN_HOSTS" "$kh.hashed"
ssh-keygen -q -H -f "$kh.hashed" >/dev/null 2>&1
grep -q '^|1|' "$kh.hashed" || fail "ssh-keygen -H hashed the entry: $(cat "$kh.hashed")"
assert_exit 0 env KISTORE_SSH_KNOWN_HOSTS="$kh.hashed" "$KISTORE" --store A push ssh
cp "$kh.hashed" "$HOME/.ssh/known_hosts"
assert_exit 0 env -u KISTORE_SSH_KNOWN_HOSTS "$KISTORE" --store A push ssh
rm -f "$HOME/.ssh/known_hosts"
# a hashed @revoked entry refuses too
{ printf '@revoked '; cut -d' ' -f1 "$kh.hashed" | head -1 | tr -d '\n'; printf ' %s\n' "$server_key"; } >"$kh.hashed-revoked"
cat "$SSH_KNOWN_HOSTS" >>"$kh.hashed-revoked"
assert_exit 4 env KISTORE_SSH_KNOWN_HOSTS="$kh.hashed-revoked" "$KISTORE" --store A push ssh
assert_contains "$ERR" "REVOKED" "a hashed @revoked entry refuses"
pass "ssh known_hosts: @revoked refuses, [host]:port required, @cert-authority unused, hashed entries honoured"

# Unreachable remotes fail fast with exit 4 and name the remote.
closed=$(free_port)
assert_exit 0 ks --store A remote add closed "git://127.0.0.1:$closed/x.git"
t=$SECONDS
assert_exit 4 ks --store A push closed
assert_contains "$ERR" "closed" "closed port: names the remote"
assert_exit 4 ks --store A pull closed
((SECONDS - t < 10)) || fail "closed port took $((SECONDS - t))s"
assert_exit 0 ks --store A remote add nowhere "$BASE/does-not-exist.git"
assert_exit 4 ks --store A pull nowhere
assert_contains "$ERR" "nowhere" "missing path: names the remote"
assert_exit 4 ks clone "$GIT_DAEMON_URL/does-not-exist.git" "$WORK/clone-missing"
[[ ! -e $WORK/clone-missing ]] || fail "a failed clone left its folder"
assert_exit 2 ks --store A pull no-such-remote
assert_contains "$ERR" "no remote named" "unknown remote name"
assert_contains "$ERR" "or give a URL or path instead of a name" "unknown remote name: says a URL works too"
assert_exit_unchanged 2 A "a misspelt remote" ks --store A pull nowher
assert_contains "$ERR" 'no remote named "nowher"; did you mean "nowhere"?' "a misspelt remote: the nearest name"
pass "unreachable remotes: closed port, missing path, missing repo -> exit 4 fast; unknown name -> 2"

# Progress on a terminal (script(1) gives kistore one): objects and bytes,
# for a push and for a clone over git://; --json reports the pack's size.
git init -q --bare -b main "$BASE/t-progress.git"
assert_exit 0 ks --store A remote add progress "$GIT_DAEMON_URL/t-progress.git"
tty_out=$(KISTORE_PROGRESS_DELAY_MS=0 timeout -k 2 60 script -qec "'$KISTORE' --store A push progress" /dev/null </dev/null)
assert_contains "$tty_out" "sending [" "push: a progress bar on a terminal"
grep -Eq 'sending \[#+\] [0-9,]+/[0-9,]+ objects(, [0-9,]+/s)?(, [0-9]+:[0-9]{2} left)?, [0-9.]+ (B|KiB)' <<<"$tty_out" ||
    fail "push: the bar shows objects and bytes: $tty_out"
tty_out=$(KISTORE_PROGRESS_DELAY_MS=0 timeout -k 2 60 script -qec "'$KISTORE' clone '$GIT_DAEMON_URL/t-progress.git' '$WORK/clone-progress'" /dev/null </dev/null)
grep -Eq 'receiving \[#*\.*\] [0-9,]+/[0-9,]+ objects(, [0-9,]+/s)?(, [0-9]+:[0-9]{2} left)?, [0-9.]+ (B|KiB)' <<<"$tty_out" ||
    fail "clone: the bar shows objects and bytes: $tty_out"
# add: the documents it wrote, then the index entries of a known total, each with its unit.
"$PY" "$SRC/bench/gen.py" 3000 --seed 11 --out "$WORK/progress.jsonl" >/dev/null
assert_exit 0 ks init "$WORK/progress-store"
tty_out=$(KISTORE_PROGRESS_DELAY_MS=0 timeout -k 2 60 script -qec "'$KISTORE' --store '$WORK/progress-store' add '$WORK/progress.jsonl'" /dev/null </dev/null)
grep -Eq 'adding [0-9,]+ documents' <<<"$tty_out" || fail "add: documents with their unit: $tty_out"
grep -Eq 'indexing \[[#.]+\] [0-9,]+/[0-9,]+ index entries' <<<"$tty_out" || fail "add: index entries of a total: $tty_out"
# verify: the git objects it read, of the total the store's packs list, ending at that total.
tty_out=$(KISTORE_PROGRESS_DELAY_MS=0 timeout -k 2 60 script -qec "'$KISTORE' --store '$WORK/progress-store' verify" /dev/null </dev/null)
total=$(git -C "$WORK/progress-store" count-objects -v | awk '/^in-pack:/ {print $2}')
grep -Eq "verifying \[#+\] ([0-9,]+)/\1 git objects" <<<"$tty_out" || fail "verify: the bar ends at its total: $tty_out"
[ "$(grep -Eo '/[0-9,]+ git objects' <<<"$tty_out" | tail -1 | tr -d '/,' | cut -d' ' -f1)" = "$total" ] ||
    fail "verify: the total is the packs' object count ($total): $tty_out"
assert_exit 0 ks --store A --no-progress push progress
assert_not_contains "$ERR" "sending [" "no bar when stderr is not a terminal"
git init -q --bare -b main "$BASE/t-progress2.git"
assert_exit 0 ks --store A remote add progress2 "$GIT_DAEMON_URL/t-progress2.git"
assert_exit 0 ks --store A --json push progress2
bytes=$(jq -r .pushed_bytes <<<"$OUT")
[[ $bytes =~ ^[0-9]+$ && $bytes -gt 1000 ]] || fail "push --json: pushed_bytes is $bytes"
pass "progress bars on a terminal (unit, total, rate, bytes) for push, clone, add and verify; --json pushed_bytes"

# The remote refuses the update (a pre-receive hook): exit 4, not success.
git init -q --bare -b main "$BASE/t-hook.git"
printf '#!/bin/sh\necho "kistore-test: pushes are closed" >&2\nexit 1\n' >"$BASE/t-hook.git/hooks/pre-receive"
chmod +x "$BASE/t-hook.git/hooks/pre-receive"
assert_exit 0 ks --store A remote add hook "$GIT_DAEMON_URL/t-hook.git"
assert_exit 4 ks --store A push hook
assert_contains "$ERR" "rejected" "hook rejection reported"
assert_eq "none" "$(head_of "$BASE/t-hook.git")" "hook: nothing pushed"
pass "a push the remote rejects exits 4"

# The remote cannot store the pack (a size limit): exit 4 naming why, the
# remote's branch unchanged.
# A store of one small document: its pack fits in git index-pack's 4 KiB input
# buffer, so the server reads it all before it refuses and answers (a larger
# pack left unread makes the server's close a TCP reset, which hides the cause).
git init -q --bare -b main "$BASE/t-limit.git"
git --git-dir="$BASE/t-limit.git" config receive.maxInputSize 100
jq .protocol "$FIXTURE" >"$WORK/limit-protocol.json"
assert_exit 0 ks --store "$WORK/limit-store" init
assert_exit 0 ks --store "$WORK/limit-store" add "$WORK/limit-protocol.json"
assert_exit 0 ks --store "$WORK/limit-store" remote add limit "$GIT_DAEMON_URL/t-limit.git"
assert_exit 4 ks --store "$WORK/limit-store" push limit
assert_contains "$ERR" "could not store the pushed objects" "size limit: the cause is named"
assert_contains "$ERR" "limit ($GIT_DAEMON_URL/t-limit.git)" "size limit: the remote is named"
assert_eq "none" "$(head_of "$BASE/t-limit.git")" "size limit: nothing pushed"
pass "a pack the remote cannot store exits 4 and names the remote"

# The remote's branch moves after kistore listed it and before its update
# lands (an update hook moves it once, as a concurrent pusher would): the
# server refuses the stale update, kistore pulls, merges and pushes again,
# and nobody's commit is lost.
R2=$BASE/t-moved.git
git init -q --bare -b main "$R2"
assert_exit 0 ks --store A remote add moved "$GIT_DAEMON_URL/t-moved.git"
assert_exit 0 ks --store A push moved
assert_exit 0 ks clone "$GIT_DAEMON_URL/t-moved.git" M
assert_exit 0 ks clone "$GIT_DAEMON_URL/t-moved.git" N
assert_exit 0 ks --store M add "$(variant 30)"
assert_exit 0 git --git-dir=M push -q "$R2" main:refs/heads/elsewhere
theirs=$(head_of M)
cat >"$R2/hooks/update" <<HOOK
#!/bin/sh
# Once: move main to the other writer's commit, then let receive-pack go on.
if [ "\$1" = refs/heads/main ] && [ ! -e "$WORK/moved-once" ]; then
    touch "$WORK/moved-once"
    git update-ref refs/heads/main $theirs
fi
exit 0
HOOK
chmod +x "$R2/hooks/update"
assert_exit 0 ks --store N add "$(variant 31)"
assert_exit 0 ks --store N --json push
[[ -e $WORK/moved-once ]] || fail "the update hook did not run"
assert_contains "$OUT" '"result":"pushed"' "moved: pushed in the end"
assert_contains "$OUT" '"result":"merge"' "moved: merged the other writer's commit first"
assert_eq "$(head_of N)" "$(head_of "$R2")" "moved: the remote has N's merge"
git --git-dir="$R2" merge-base --is-ancestor "$theirs" main || fail "moved: the other writer's commit was lost"
assert_exit 0 git --git-dir="$R2" fsck --strict --no-progress
pass "the remote's branch moves during a push: refused as stale, pulled, merged, pushed again"

# ---------------------------------------------------------------------------
# Two people, one remote: both add, both push (the second merges), both pull.
R=$BASE/shared.git
git init -q --bare -b main "$R"
assert_exit 0 ks --store A remote add shared "$GIT_DAEMON_URL/shared.git"
assert_exit 0 ks --store A push shared
assert_exit 0 ks clone "$GIT_DAEMON_URL/shared.git" B
assert_exit 0 ks --store A add "$(variant 1)"
assert_exit 0 env KISTORE_AUTHOR="Bob <bob@example.org>" "$KISTORE" --store B add "$(variant 2)"
assert_exit 0 ks --store A push shared
assert_exit 0 env KISTORE_AUTHOR="Bob <bob@example.org>" "$KISTORE" --store B --json push
assert_contains "$OUT" '"result":"pushed"' "B's push pushed"
assert_contains "$OUT" '"result":"merge"' "B's push merged A's work first"
assert_exit 0 ks --store A --json pull shared
assert_contains "$OUT" '"result":"fast-forward"' "A fast-forwards to the merge"
assert_exit 0 ks --store B --json pull
assert_contains "$OUT" '"result":"up-to-date"' "B is up to date"
assert_eq "$(head_of B)" "$(head_of A)" "A and B have the same head"
assert_eq "$(tree_of B)" "$(tree_of A)" "A and B have the same tree"
assert_eq "$(head_of B)" "$(head_of "$R")" "the remote has it too"
merges=$(git --git-dir="$R" log --merges --format='%H %P' main)
[[ $(wc -l <<<"$merges") == 1 && $(wc -w <<<"$merges") == 3 ]] || fail "expected one merge with two parents: $merges"
git --git-dir="$R" log --merges --format=%B main | grep -q '^Kistore-Op: merge$' || fail "merge has no Kistore-Op: merge"
assert_exit 0 ks --store A verify
assert_exit 0 ks --store A ls
for n in 1 2; do assert_contains "$OUT" "$(run_digest "$WORK/bundle-$n.json")" "A has run v$n"; done
assert_exit 0 git --git-dir="$R" fsck --strict --no-progress
pass "divergent stores converge: merge commit with two parents, Kistore-Op: merge, same tree, verify ok"

# Both add again, then both pull before pushing: merges on both sides, still converge.
assert_exit 0 ks --store A add "$(variant 3)"
assert_exit 0 ks --store B add "$(variant 4)"
assert_exit 0 ks --store A push shared
assert_exit 0 ks --store B pull
assert_exit 0 ks --store B push
assert_exit 0 ks --store A pull shared
assert_eq "$(head_of B)" "$(head_of A)" "second round: same head"
assert_eq "$(tree_of B)" "$(tree_of A)" "second round: same tree"
# Pull with nothing new changes nothing.
before=$(head_of A)
assert_exit 0 ks --store A --json pull shared
assert_contains "$OUT" '"result":"up-to-date"' "nothing new: up-to-date"
assert_eq "$before" "$(head_of A)" "nothing new: no commit"
pass "pull then push converges; pull with nothing new makes no commit"

# A URL or a path works where a remote's name does, as with git: push to a
# git:// URL, pull from a path, a relative path and a file:// URL, and a
# rewrite of what was pulled from a URL is still caught (its synced
# reference is kept under the URL's hash, never under the URL's text).
git init -q --bare -b main "$BASE/t-url.git"
assert_exit 0 ks --store A push "$GIT_DAEMON_URL/t-url.git"
assert_eq "$(head_of A)" "$(git --git-dir="$BASE/t-url.git" rev-parse main)" "push to a git:// URL"
ks init "$WORK/url-c" >/dev/null 2>&1
assert_exit 0 ks --store "$WORK/url-c" pull "$BASE/t-url.git"
assert_eq "$(head_of A)" "$(head_of "$WORK/url-c")" "pull from a path"
assert_exit 0 ks --store "$WORK/url-c" --json pull "file://$BASE/t-url.git"
assert_contains "$OUT" '"result":"up-to-date"' "pull from a file:// URL"
(cd "$WORK" && ks --store url-c pull "./url-c/../../repos/t-url.git") || fail "pull from a relative path"
[[ -z $(git --git-dir="$WORK/url-c" for-each-ref --format='%(refname)' | grep -F -- "$BASE") ]] ||
    fail "a URL's text became a reference name"
assert_eq 2 "$(git --git-dir="$WORK/url-c" for-each-ref --format=x refs/kistore/synced-url | wc -l)" \
    "one synced reference per URL (a path and a file:// URL)"
git --git-dir="$BASE/t-url.git" update-ref refs/heads/main "$(git --git-dir="$BASE/t-url.git" rev-parse 'main^')"
assert_exit_unchanged 1 "$WORK/url-c" "refused rewrite from a URL" ks --store "$WORK/url-c" pull "$BASE/t-url.git"
assert_contains "$ERR" "rewritten" "a URL's rewritten history is refused"
pass "URLs and paths where a remote name goes: push to git://, pull from a path, ./path, file://; a rewrite is caught"

# The same document with different metadata on both sides: the earliest
# (by the commit that introduced it) wins on both, whoever merges.
v8=$(variant 8)
sed 's/"title": "GeGLU MLP (tiled benchmark) · liger_tiled · backward"/"title": "first"/' "$v8" >"$WORK/meta-first.json"
sed 's/"title": "GeGLU MLP (tiled benchmark) · liger_tiled · backward"/"title": "second"/' "$v8" >"$WORK/meta-second.json"
assert_exit 0 env KISTORE_DATE=2000000000 "$KISTORE" --store B add "$WORK/meta-second.json"
assert_exit 0 env KISTORE_DATE=1900000000 "$KISTORE" --store A add "$WORK/meta-first.json"
v8_hex=$(run_digest "$v8")
v8_hex=${v8_hex#sha256:}
assert_exit 0 ks --store A push shared
assert_exit 0 ks --store B --json push
assert_contains "$OUT" "metadata is older" "B's merge takes A's older metadata"
assert_exit 0 ks --store A pull shared
assert_eq "$(tree_of B)" "$(tree_of A)" "metadata: same tree"
index_line A metadata "$v8_hex" | grep -q '"title":"first"' || fail "the earliest metadata did not win"
pass "metadata conflict: the earliest metadata stays on both sides"

# Concurrent pushes to one remote, on this machine and over git://: each
# pusher that loses the race pulls, merges and pushes again; nobody's commit
# is lost.
concurrent() {
    local name=$1 url=$2 bare=$3 i
    git init -q --bare -b main "$bare"
    assert_exit 0 ks --store A remote add "$name" "$url"
    assert_exit 0 ks --store A push "$name"
    for i in 1 2 3; do
        assert_exit 0 ks clone "$url" "$WORK/$name-$i"
        assert_exit 0 ks --store "$WORK/$name-$i" add "$(variant "$((10 * i + ${#name}))")"
    done
    local pids=() heads=()
    for i in 1 2 3; do
        heads+=("$(head_of "$WORK/$name-$i")")
        ks --store "$WORK/$name-$i" push >"$WORK/$name-$i.log" 2>&1 &
        pids+=($!)
    done
    for i in 0 1 2; do
        wait "${pids[$i]}" || { cat "$WORK/$name-$((i + 1)).log" >&2; fail "$name: concurrent push $((i + 1)) failed"; }
    done
    local final
    final=$(head_of "$bare")
    for i in 0 1 2; do
        git --git-dir="$bare" merge-base --is-ancestor "${heads[$i]}" "$final" ||
            fail "$name: pusher $((i + 1))'s commit was lost"
    done
    assert_exit 0 git --git-dir="$bare" fsck --strict --no-progress
    pass "$name: three concurrent pushes, all kept ($(git --git-dir="$bare" rev-list --merges --count "$(head_of A)..main") merges)"
}
concurrent cpath "$BASE/c-path.git" "$BASE/c-path.git"
concurrent cdaemon "$GIT_DAEMON_URL/c-daemon.git" "$BASE/c-daemon.git"

# ---------------------------------------------------------------------------
# Stock-git stores: a non-bare repository in the layout (default branch
# master), and a bare clone of it, clone with kistore.
mkdir -p "$WORK/stock"
git --git-dir=A archive main | tar -x -C "$WORK/stock"
git -C "$WORK/stock" init -q -b master
git -C "$WORK/stock" add -A
git -C "$WORK/stock" commit -q -m "evidence, committed with stock git"
assert_exit 0 ks clone "$WORK/stock" "$WORK/from-stock"
assert_eq "$(git -C "$WORK/stock" rev-parse HEAD)" "$(git --git-dir="$WORK/from-stock" rev-parse HEAD)" "clone of a non-bare stock repo"
assert_eq "refs/heads/master" "$(git --git-dir="$WORK/from-stock" symbolic-ref HEAD)" "clone follows the remote's HEAD"
assert_exit 0 ks --store "$WORK/from-stock" verify
git clone -q --bare "$WORK/stock" "$WORK/stock-bare.git"
assert_exit 0 ks clone "file://$WORK/stock-bare.git" "$WORK/from-stock-bare"
assert_exit 0 ks --store "$WORK/from-stock-bare" verify
pass "clone of repositories built with stock git (non-bare, bare; branch master)"

# ---------------------------------------------------------------------------
# Forged remotes, made with stock git. C clones the good state; each forgery
# is force-pushed to the remote; C's pull must refuse and leave C as it was.
F=$BASE/forge.git
git init -q --bare -b main "$F"
assert_exit 0 ks --store A remote add forge "$F"
assert_exit 0 ks --store A push forge
GOOD=$(head_of "$F")
assert_exit 0 ks clone "$F" C
rm -rf "$WORK/forger"
g clone -q "$F" "$WORK/forger"
forger() { git -C "$WORK/forger" "$@"; }

# refused KIND WHAT : C pulls, must exit 1 naming KIND, and stay unchanged.
refused() {
    local kind=$1 what=$2 h t
    h=$(head_of C) t=$(tree_of C)
    assert_exit 1 ks --store C pull
    assert_contains "$ERR" "$kind" "$what: problem kind"
    assert_contains "$ERR" "refused" "$what: says refused"
    assert_eq "$h" "$(head_of C)" "$what: C's branch unchanged"
    assert_eq "$t" "$(tree_of C)" "$what: C's tree unchanged"
    git --git-dir=C rev-parse -q --verify refs/kistore/incoming/origin >/dev/null &&
        fail "$what: quarantine ref left behind"
    assert_exit 1 ks --store C --json pull
    assert_contains "$OUT" '"result":"refused"' "$what: --json result"
    return 0
}
# forge_commit MSG CHANGE... : a commit on GOOD with index edits, each
# "path<TAB>blob" or "path<TAB>DELETE"; force-pushed to the remote.
forge_commit() {
    local msg=$1
    shift
    forger reset -q --hard "$GOOD"
    local change path blob
    for change in "$@"; do
        path=${change%%$'\t'*} blob=${change#*$'\t'}
        if [[ $blob == DELETE ]]; then
            forger update-index --force-remove "$path"
        else
            forger update-index --add --cacheinfo "100644,$blob,$path"
        fi
    done
    local tree commit
    tree=$(forger write-tree)
    commit=$(printf '%s\n' "$msg" | forger commit-tree "$tree" -p "$GOOD")
    forger push -q --force origin "$commit:refs/heads/main"
    printf '%s\n' "$commit"
}
seed_hex=${SEED_RUN#sha256:}
seed_obj=objects/sha256/${seed_hex:0:2}/${seed_hex:2:2}/${seed_hex:4}
seed_blob=$(forger rev-parse "$GOOD:$seed_obj")

# (b) a new object path whose blob is other bytes (a valid frame of another document)
v5_hex=$(run_digest "$(variant 5)")
v5_hex=${v5_hex#sha256:}
v5_obj=objects/sha256/${v5_hex:0:2}/${v5_hex:2:2}/${v5_hex:4}
c=$(forge_commit "add: forged object" "$v5_obj"$'\t'"$seed_blob")
refused object-hash-mismatch "object whose bytes do not hash to its path"
assert_contains "$ERR" "$v5_obj" "forged object: names the path"
assert_contains "$ERR" "${c:0:12}" "forged object: names the commit"
pass "refused: a new object path holding other bytes (commit ${c:0:12})"

# (b) one new object's bytes at its own path and at another object's path:
# each path is checked on its own, though the blob is the same.
assert_exit 0 ks --store "$WORK/v7" init
assert_exit 0 ks --store "$WORK/v7" add "$(variant 7)"
v7_hex=$(run_digest "$(variant 7)")
v7_hex=${v7_hex#sha256:}
v7_obj=objects/sha256/${v7_hex:0:2}/${v7_hex:2:2}/${v7_hex:4}
v7_blob=$(git --git-dir="$WORK/v7" cat-file blob "main:$v7_obj" | forger hash-object -w --stdin)
c=$(forge_commit "add: one object at two paths" "$v7_obj"$'\t'"$v7_blob" "$v5_obj"$'\t'"$v7_blob")
refused object-hash-mismatch "one object's bytes at two object paths"
assert_contains "$ERR" "object-hash-mismatch: $v5_obj" "two paths: the wrong one is refused"
assert_eq 1 "$(grep -c 'refused: object-hash-mismatch' <<<"$ERR")" "two paths: only the wrong one is a mismatch"
pass "refused: one object's bytes at its own path and at another's (commit ${c:0:12})"

# (e) an existing object changed
junk=$(printf 'not a zstd frame' | forger hash-object -w --stdin)
c=$(forge_commit "add: overwrite" "$seed_obj"$'\t'"$junk")
refused history-rewritten "changed object"
assert_contains "$ERR" "$seed_obj" "changed object: names the path"
pass "refused: an existing object changed"

# (e) an existing object removed
c=$(forge_commit "gc: drop" "$seed_obj"$'\t'DELETE)
refused history-rewritten "removed object"
pass "refused: an existing object removed"

# forged_line FAMILY KEY LINE|- : forge_commit's "path<TAB>blob" change that
# puts LINE as KEY's line in GOOD's file of FAMILY (or removes it), made with
# stock git (lib/index_lines.py set).
forged_line() {
    local info
    info=$(INDEX_REF=$GOOD set_line "$WORK/forger/.git" "$@")
    [[ ${info%% *} != 0 ]] || fail "forged_line: the file would go: $*"
    printf '%s\t%s\n' "${info#*$'\t'}" "$(cut -d' ' -f2 <<<"${info%%$'\t'*}")"
}

# (d) an unsigned level change: source-native -> reproduced in a plain commit.
# Format 3: the seed at its default level has no line in refs/levels; the
# forgery adds one (its evidence the run itself: no rerun at all).
[[ -z $(INDEX_REF=$GOOD index_keys "$WORK/forger/.git" levels) ]] || fail "the good state has a level line"
c=$(forge_commit "promote" "$(forged_line levels "$seed_hex" \
    "{\"@key\":\"$seed_hex\",\"evidence\":\"sha256:$seed_hex\",\"level\":\"reproduced\"}")")
refused level-unjustified "unsigned level change"
assert_contains "$ERR" "refs/levels @$seed_hex" "level change: names the line's family and key"
assert_contains "$ERR" "${c:0:12}" "level change: names the commit"
pass "refused: an unsigned level change (source-native -> reproduced)"

# (c) an index line inconsistent with its object (the seed's group line's value changed)
grp_key=$(INDEX_REF=$GOOD index_keys "$WORK/forger/.git" groups | grep "$seed_hex\$")
fake=$(INDEX_REF=$GOOD index_line "$WORK/forger/.git" groups "$grp_key" | jq -c --sort-keys '.value = 1')
[[ $fake == '{"@key":"'"$grp_key"'","metric":"latency","statistic":"median","unit":"ns","value":1}' ]] ||
    fail "the forged group line: $fake"
c=$(forge_commit "faster" "$(forged_line groups "$grp_key" "$fake")")
refused group-mismatch "group entry inconsistent with its run"
assert_contains "$ERR" "refs/groups @$grp_key" "group line: names the line's family and key"
pass "refused: an index entry inconsistent with its object"

# a path outside the layout
readme=$(printf 'hello\n' | forger hash-object -w --stdin)
c=$(forge_commit "docs" "README.md"$'\t'"$readme")
refused layout "path outside the layout"
pass "refused: a path outside the store layout"

# (a) a rewritten history: C syncs a good new commit, then the remote is
# force-pushed to a history without it.
forger reset -q --hard "$GOOD"
forger push -q --force origin "$GOOD:refs/heads/main"
assert_exit 0 ks --store A add "$(variant 6)"
assert_exit 0 ks --store A push forge
assert_exit 0 ks --store C pull
assert_eq "$(head_of A)" "$(head_of C)" "C took the good commit"
forger fetch -q origin
amended=$(printf 'add: the same documents, amended\n\nKistore-Op: add\n' | forger commit-tree 'origin/main^{tree}' -p "$GOOD")
forger push -q --force origin "$amended:refs/heads/main"
refused history-rewritten "rewritten history"
pass "refused: a force-pushed rewritten history"

# ---------------------------------------------------------------------------
# A rerun commit signed by a trusted controller with stock git is taken; the
# same commit is refused by a store that does not trust its key. Its tree (the
# rerun's documents, their index entries and the run's new level naming the
# rerun as evidence: a valid rerun commit, SPEC §1) is one kistore made.
ssh-keygen -q -t ed25519 -N '' -C controller -f "$WORK/controller" </dev/null >/dev/null
printf 'controller@example.org %s\n' "$(cut -d' ' -f1,2 "$WORK/controller.pub")" >"$WORK/allowed_signers"
git --git-dir="$F" update-ref refs/heads/main "$(head_of A)" # undo the rewrite
forger fetch -q origin
forger reset -q --hard origin/main
sed -e 's/"median": 2606080/"median": 2607000/' -e 's|2025-11-11-06-22-57"|2025-11-11-06-22-57-forge-rerun"|' "$FIXTURE" >"$WORK/forge-rerun.json"
assert_exit 0 ks clone "$F" "$WORK/rerun-maker"
assert_exit 0 ks --store "$WORK/rerun-maker" trust add controller@example.org "$WORK/controller.pub"
assert_exit 0 ks --store "$WORK/rerun-maker" rerun "$SEED_RUN" "$WORK/forge-rerun.json" --sign "$WORK/controller"
forger fetch -q "$WORK/rerun-maker" main
tree=$(forger rev-parse 'FETCH_HEAD^{tree}')
signed=$(printf 'rerun: reproduced %s\n\nKistore-Op: rerun\n' "$SEED_RUN" |
    forger -c gpg.format=ssh -c user.signingKey="$WORK/controller" commit-tree -S "$tree" -p HEAD)
forger push -q origin "$signed:refs/heads/main"
refused level-unjustified "signed level change, untrusted key"
mkdir -p C/kistore && cp "$WORK/allowed_signers" C/kistore/allowed_signers
assert_exit 0 ks --store C --json pull
assert_contains "$OUT" '"result":"fast-forward"' "trusted signed rerun: taken"
assert_eq "$signed" "$(head_of C)" "C has the signed rerun"
[[ $(index_line C levels "$seed_hex" | jq -r .level) == reproduced ]] || fail "C's run is not reproduced"
assert_exit 0 ks --store C verify
# and it merges into a store that has moved on
assert_exit 0 ks --store A add "$(variant 7)"
mkdir -p A/kistore && cp "$WORK/allowed_signers" A/kistore/allowed_signers
assert_exit 0 ks --store A --json pull forge
assert_contains "$OUT" '"result":"merge"' "A merges the signed rerun"
[[ $(index_line A levels "$seed_hex" | jq -r .level) == reproduced ]] || fail "A's run is not reproduced after the merge"
assert_eq 1 "$(index_keys A levels "$seed_hex" | grep -cx "$seed_hex")" "A's run has one level line"
assert_eq "$(index_line C levels "$seed_hex")" "$(index_line A levels "$seed_hex")" "A's level line is C's (the same evidence)"
assert_exit 0 ks --store A verify
assert_exit 0 ks --store A push forge
assert_exit 0 ks --store C pull
assert_eq "$(head_of A)" "$(head_of C)" "C takes A's merge of the rerun"
pass "a trusted signed rerun's level change is taken (fast-forward and merge); untrusted is refused"

# The same with kistore's own commands: import, add, attest, a signed rerun
# by a controller of the writer's store; a clone takes it only when told to
# trust that controller (--allowed-signers), and the clone verifies.
assert_exit 0 ks init W
assert_exit 0 ks --store W import liger "$SRC/tests/data/liger/sample.csv"
assert_exit 0 ks --store W add "$FIXTURE"
assert_exit 0 ks --store W attest "$SEED_RUN" --note "numbers look plausible"
assert_exit 0 ks --store W trust add controller@example.org "$WORK/controller.pub"
sed -e 's/"median": 2606080/"median": 2606999/' -e 's|2025-11-11-06-22-57"|2025-11-11-06-22-57-rerun"|' "$FIXTURE" >"$WORK/rerun.json"
assert_exit 0 ks --store W rerun "$SEED_RUN" "$WORK/rerun.json" --sign "$WORK/controller"
git init -q --bare -b main "$BASE/w.git"
assert_exit 0 ks --store W remote add origin "$HTTP_PLAIN/w.git"
assert_exit 0 ks --store W push
assert_exit 1 ks clone "$HTTP_PLAIN/w.git" "$WORK/w-untrusting"
assert_contains "$ERR" "level-unjustified" "clone without trust: refused"
assert_contains "$ERR" "--allowed-signers" "clone without trust: hint"
[[ ! -e $WORK/w-untrusting ]] || fail "a refused clone left its folder"
assert_exit 0 ks clone --allowed-signers "$WORK/allowed_signers" "$HTTP_PLAIN/w.git" "$WORK/w-trusting"
assert_eq "$(head_of W)" "$(head_of "$WORK/w-trusting")" "clone with trust: same head"
assert_exit 0 ks --store "$WORK/w-trusting" verify
assert_exit 0 ks --store "$WORK/w-trusting" trust list
assert_contains "$OUT" "controller@example.org" "clone with trust: trust list kept"
pass "import, attest and a signed rerun sync over http; clone --allowed-signers takes and verifies them"

# ---------------------------------------------------------------------------
finished_within test_sync 120
summary
