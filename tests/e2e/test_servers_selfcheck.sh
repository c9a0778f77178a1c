#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# Self-check of tests/e2e/lib/servers.sh using stock git only (no kistore).
# For each transport (path, file://, git://, http://, http:// with basic auth,
# ssh://): push a commit from a scratch clone, clone it back, git fsck --strict,
# compare contents.  Then stop the servers and check that none is left.
# Must finish in < 60 s; safe to run in parallel and with stdin closed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/servers.sh
. "$here/lib/servers.sh"

servers_init

# Isolate git from the user's/system config.
# shellcheck source=lib/isolate.sh
. "$here/lib/isolate.sh"
export GIT_AUTHOR_NAME=selfcheck GIT_AUTHOR_EMAIL=selfcheck@example.invalid
export GIT_COMMITTER_NAME=selfcheck GIT_COMMITTER_EMAIL=selfcheck@example.invalid
export GIT_ASKPASS=/bin/false SSH_ASKPASS=/bin/false
unset GIT_SSH GIT_SSH_COMMAND GIT_DIR GIT_WORK_TREE

# every network git command is bounded
TMO=20
g() { timeout -k 2 "$TMO" git "$@"; }

BASE=$SERVERS_DIR/repos
WORK=$SERVERS_DIR/work
mkdir -p "$BASE" "$WORK"

for t in path file daemon http auth ssh; do
    git init -q --bare -b main "$BASE/t-$t.git"
done

start_git_daemon "$BASE"
pass "git daemon started at $GIT_DAEMON_URL"
start_http_git "$BASE"
HTTP_PLAIN_URL=$HTTP_GIT_URL
pass "http git started at $HTTP_PLAIN_URL"
start_http_git "$BASE" --auth alice 's3cret:pw'
HTTP_AUTH_URL=$HTTP_GIT_URL
HTTP_AUTH_HOSTPORT=${HTTP_AUTH_URL#http://}
pass "http git with basic auth started at $HTTP_AUTH_URL"
start_sshd
pass "sshd started at $SSH_URL_PREFIX"

# All listeners are on 127.0.0.1 only.
if have_tool ss; then
    while read -r _ pid; do
        if ss -Hltnp 2>/dev/null | grep "pid=$pid," | awk '{print $4}' | grep -qv '^127\.0\.0\.1:'; then
            ss -Hltnp | grep "pid=$pid," >&2
            fail "server pid $pid listens on a non-loopback address"
        fi
    done <"$SERVERS_DIR/pids"
    pass "servers listen on 127.0.0.1 only"
fi

# roundtrip NAME URL BAREDIR : push a commit through URL, clone it back, check.
roundtrip() {
    local name=$1 url=$2 bare=$3
    local src=$WORK/$name-src dst=$WORK/$name-dst
    assert_exit 0 g clone -q "$url" "$src"
    printf 'hello over %s\n' "$name" >"$src/hello.txt"
    mkdir -p "$src/sub"
    # > 1 MiB of incompressible data: over HTTP git then sends the pack with
    # chunked transfer encoding (http.postBuffer), which the server must handle.
    head -c 1500000 /dev/urandom >"$src/sub/blob.bin"
    git -C "$src" add -A
    git -C "$src" commit -q -m "commit over $name"
    assert_exit 0 g -C "$src" push -q origin HEAD:main
    local want
    want=$(git -C "$src" rev-parse HEAD)
    assert_eq "$want" "$(git --git-dir="$bare" rev-parse refs/heads/main)" "$name: server has the pushed commit"
    assert_exit 0 git --git-dir="$bare" fsck --strict --no-progress
    assert_exit 0 g clone -q "$url" "$dst"
    assert_eq "$want" "$(git -C "$dst" rev-parse HEAD)" "$name: clone has the pushed commit"
    assert_exit 0 git -C "$dst" fsck --strict --no-progress
    cmp -s "$src/hello.txt" "$dst/hello.txt" || fail "$name: hello.txt differs"
    cmp -s "$src/sub/blob.bin" "$dst/sub/blob.bin" || fail "$name: blob.bin differs"
    # a second push (fast-forward) and a fetch of it
    echo more >>"$dst/hello.txt"
    git -C "$dst" commit -q -am "second commit over $name"
    assert_exit 0 g -C "$dst" push -q origin HEAD:main
    assert_exit 0 g -C "$src" pull -q --ff-only origin main
    assert_eq "$(git -C "$dst" rev-parse HEAD)" "$(git -C "$src" rev-parse HEAD)" "$name: fetch after second push"
    pass "$name: push, clone, fsck --strict, contents, fetch ($url)"
}

roundtrip path "$BASE/t-path.git" "$BASE/t-path.git"
roundtrip file "file://$BASE/t-file.git" "$BASE/t-file.git"
roundtrip daemon "$GIT_DAEMON_URL/t-daemon.git" "$BASE/t-daemon.git"
roundtrip http "$HTTP_PLAIN_URL/t-http.git" "$BASE/t-http.git"
roundtrip auth "http://alice:s3cret%3Apw@$HTTP_AUTH_HOSTPORT/t-auth.git" "$BASE/t-auth.git"

# ssh: stock git uses GIT_SSH_COMMAND exported by start_sshd
[[ -n ${GIT_SSH_COMMAND:-} && -n ${KISTORE_SSH_KEY:-} && -f $SSH_KEY && -s $SSH_KNOWN_HOSTS ]] ||
    fail "start_sshd did not export GIT_SSH_COMMAND/KISTORE_SSH_KEY/SSH_KNOWN_HOSTS"
grep -q "^\[127.0.0.1\]:$SSH_PORT ssh-ed25519 " "$SSH_KNOWN_HOSTS" || fail "known_hosts has no host key"
# the known_hosts file is right: strict checking succeeds with it
SSH_HOST=${SSH_URL_PREFIX#ssh://}
SSH_HOST=${SSH_HOST%:*}
assert_exit 0 timeout 20 ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes \
    -o UserKnownHostsFile="$SSH_KNOWN_HOSTS" -o GlobalKnownHostsFile=/dev/null \
    -i "$SSH_KEY" -o IdentitiesOnly=yes -p "$SSH_PORT" "$SSH_HOST" git --version
assert_contains "$OUT" "git version" "ssh runs commands"
pass "ssh: key login with strict host key checking"
roundtrip ssh "$SSH_URL_PREFIX$BASE/t-ssh.git" "$BASE/t-ssh.git"

# a wrong key is refused
ssh-keygen -q -t ed25519 -N '' -f "$WORK/wrong_key" </dev/null >/dev/null
assert_exit '!0' env GIT_SSH_COMMAND="ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=$SSH_KNOWN_HOSTS -i $WORK/wrong_key -o IdentitiesOnly=yes" \
    timeout 20 git ls-remote "$SSH_URL_PREFIX$BASE/t-ssh.git"
assert_contains "$ERR" "Permission denied" "ssh: wrong key refused"
pass "ssh: wrong key refused"

# basic auth: wrong password, no credentials, wrong user are all refused
head_auth=$(git --git-dir="$BASE/t-auth.git" rev-parse main)
for cred in "alice:wrong@" "" "bob:s3cret%3Apw@"; do
    assert_exit '!0' g ls-remote "http://$cred$HTTP_AUTH_HOSTPORT/t-auth.git"
    # with credentials in the URL git says "Authentication failed"; without,
    # it gets a 401 and then cannot prompt (no terminal, GIT_ASKPASS=false)
    [[ $ERR == *"Authentication failed"* || $ERR == *"could not read Username"* ]] ||
        fail "auth: '$cred' refused for an unexpected reason: $ERR"
    assert_exit '!0' g -C "$WORK/auth-src" push -q "http://$cred$HTTP_AUTH_HOSTPORT/t-auth.git" HEAD:refs/heads/other
done
assert_eq "$head_auth" "$(git --git-dir="$BASE/t-auth.git" rev-parse main)" "auth: refused pushes changed nothing"
git --git-dir="$BASE/t-auth.git" rev-parse -q --verify refs/heads/other >/dev/null &&
    fail "auth: refused push created a branch"
if have_tool curl; then
    code=$(curl -s -o /dev/null -w '%{http_code}' "$HTTP_AUTH_URL/t-auth.git/info/refs?service=git-upload-pack")
    assert_eq 401 "$code" "auth: HTTP status without credentials"
fi
pass "auth: wrong password / no credentials / wrong user refused"
# credentials from a credential helper (as a token env would be) work too
export TOKEN='s3cret:pw'
assert_exit 0 g -c credential.helper= \
    -c credential.helper='!f() { echo username=alice; echo "password=$TOKEN"; }; f' \
    ls-remote "$HTTP_AUTH_URL/t-auth.git"
assert_contains "$OUT" "refs/heads/main" "auth: credential helper"
pass "auth: credentials from a helper/env accepted"

# the plain http server refuses nothing, but a missing repo is a clean error
assert_exit '!0' g ls-remote "$HTTP_PLAIN_URL/does-not-exist.git"
assert_exit '!0' g ls-remote "$GIT_DAEMON_URL/does-not-exist.git"
pass "missing repositories are errors"

# stop everything and check that nothing is left
pids=$(awk '{print $2}' "$SERVERS_DIR/pids")
stop_servers
stop_servers # idempotent
for p in $pids; do
    if _servers_pid_live "$p"; then
        ps -o pid,pgid,cmd -p "$p" >&2 || true
        fail "server pid $p still running after stop_servers"
    fi
done
# any process whose command line names our dir (pure bash, no procps)
left=''
for f in /proc/[0-9]*/cmdline; do
    args=()
    { mapfile -d '' args <"$f"; } 2>/dev/null || continue
    [[ "${args[*]}" == *"$SERVERS_DIR"* ]] && left+="${f#/proc/} ${args[*]}"$'\n'
done
if [[ -n $left ]]; then
    printf '%s' "$left" >&2
    fail "processes referring to $SERVERS_DIR left after stop_servers"
fi
assert_exit '!0' timeout 5 git ls-remote "$GIT_DAEMON_URL/t-daemon.git"
npids=$(wc -w <<<"$pids")
pass "all servers stopped, none left ($npids process groups)"

# The fingerprint the attack tests compare (lib/fingerprint.sh): equal for a
# folder left as it was, different for each kind of change a refused write
# could leave behind.
# shellcheck source=lib/fingerprint.sh
. "$here/lib/fingerprint.sh"
FPD=$WORK/fp && mkdir -p "$FPD/a/b" && echo one >"$FPD/a/x" && echo two >"$FPD/a/b/y" && ln -s a/x "$FPD/l"
base_fp=$(store_fingerprint "$FPD")
assert_eq "$base_fp" "$(store_fingerprint "$FPD")" "fingerprint of an unchanged folder"
fp_changes() { # fp_changes WHAT DO UNDO
    eval "$2"; [[ $(store_fingerprint "$FPD") != "$base_fp" ]] || fail "fingerprint misses: $1"
    eval "$3"; assert_eq "$base_fp" "$(store_fingerprint "$FPD")" "fingerprint back after undoing: $1"
}
fp_changes "a changed byte" 'echo ONE >"$FPD/a/x"' 'echo one >"$FPD/a/x"'
FPM=$(stat -c %a "$FPD/a/x")
fp_changes "a changed mode" 'chmod 711 "$FPD/a/x"' 'chmod "$FPM" "$FPD/a/x"'
fp_changes "an added file" 'touch "$FPD/a/b/z"' 'rm "$FPD/a/b/z"'
fp_changes "an empty folder left" 'mkdir "$FPD/a/tmp"' 'rmdir "$FPD/a/tmp"'
fp_changes "a file named with a newline" 'touch "$FPD/a/n"$'"'"'\n'"'"'"m"' 'rm "$FPD/a/n"$'"'"'\n'"'"'"m"'
fp_changes "a link retargeted" 'ln -sfn a/b/y "$FPD/l"' 'ln -sfn a/x "$FPD/l"'
fp_changes "a fifo" 'mkfifo "$FPD/a/p"' 'rm "$FPD/a/p"'
pass "the attack tests' store fingerprint sees every change (bytes, mode, file, folder, link, fifo)"

finished_within self-check 60
summary
