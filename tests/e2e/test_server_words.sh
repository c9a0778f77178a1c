#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# What a server says when it turns a connection down reaches the person in
# its own words, not as "cannot connect": an ssh server that accepts the key
# and then refuses the repository (as gitolite's "W any evidence reader
# DENIED by fallthru" does, on standard error, exit 1) is reported as having
# turned the connection down, its lines joined, escaped, with no literal \n;
# pull, push and clone exit 4 and write nothing. (A hook's words on a push:
# tests/e2e/test_push_race.sh.)
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). A few seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in words
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$FX"
start_sshd
export KISTORE_SSH_KNOWN_HOSTS=$SSH_KNOWN_HOSTS KISTORE_SSH_KEY=$SSH_KEY
printf 'command="echo FATAL: W any evidence reader DENIED by fallthru >&2; printf \\"(or you mis-spelled the reponame)\\\\033[31m\\\\n\\" >&2; exit 1" %s\n' \
    "$(cat "$SSH_KEY.pub")" >"$SSH_DIR/authorized_keys"
URL=$SSH_URL_PREFIX/srv/evidence.git
said="turned the connection down; the server said: FATAL: W any evidence reader DENIED by fallthru | (or you mis-spelled the reponame)\\x1b[31m"
for cmd in pull push; do
    assert_exit_unchanged 4 "$S" "$cmd of a denied ssh repository" ks --store "$S" "$cmd" "$URL"
    assert_contains "$ERR" "$said" "$cmd: the server's words, joined and escaped"
    assert_not_contains "$ERR" "cannot connect" "$cmd: not called a failure to connect"
    assert_not_contains "$ERR" '\n' "$cmd: no literal \\n"
done
assert_exit 4 ks clone "$URL" "$W/clone"
assert_contains "$ERR" "$said" "clone: the server's words"
[[ ! -e $W/clone ]] || fail "a refused clone left its folder"
pass "an ssh server that refuses the repository: pull, push and clone exit 4 with its words, nothing written"

summary
