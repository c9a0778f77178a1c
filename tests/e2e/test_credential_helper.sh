#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# git's own credential helpers (issue 31 item 6): for an https remote that asks who the user is,
# kistore asks `git credential fill` after KISTORE_TOKEN and ~/.netrc, as git's https transport
# does, and tells the helpers `approve` when the credential worked and `reject` when the server
# refused it (a stale stored password is dropped). Never over plain http; never to another
# origin (offer()'s origin rule, test_attack_credentials.sh); git never prompts on a terminal.
#
# A git http-backend behind nginx with TLS and basic auth (bob / PW) serves a bare repository.
# Helpers are configured in the test's own ~/.gitconfig: credential-store files, and a helper
# script that logs every action it is asked and answers from a file.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
work_in helper
unset KISTORE_TOKEN KISTORE_TOKEN_URL
export GIT_ASKPASS=/bin/false SSH_ASKPASS=/bin/false
PW=Helper-pw-for-bob-k3
mkdir -p "$W/repos"
git init -q --bare -b main "$W/repos/ev.git"
start_http_git "$W/repos" --tls --auth bob "$PW"
HTTPS=$HTTP_GIT_URL
export KISTORE_SSL_CAINFO=$HTTP_GIT_CA
start_http_git "$W/repos" --auth bob "$PW"
PLAIN=$HTTP_GIT_URL

S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$FX"

# With no helper, no token and no ~/.netrc: exit 4, saying how to give a credential, nothing sent.
assert_exit 4 ks --store "$S" push "$HTTPS/ev.git"
assert_contains "$ERR" "git credential helper" "no credential: the message names git's helpers"
assert_eq "" "$(git --git-dir="$W/repos/ev.git" for-each-ref)" "nothing was pushed"
pass "no credential anywhere: exit 4, the message says how (a git credential helper among the ways)"

# A helper that logs each action and answers from $W/answer (nothing when it is empty). Its
# paths are written into it: git runs it with kistore's allow-listed environment only.
HELPER_LOG=$W/helper.log
cat >"$W/helper.sh" <<SH
#!/bin/sh
input=\$(cat)
printf '%s %s\\n' "\$1" "\$(printf '%s' "\$input" | tr '\\n' ' ')" >>"$HELPER_LOG"
[ "\$1" = get ] && [ -s "$W/answer" ] && cat "$W/answer"
exit 0
SH
chmod +x "$W/helper.sh"
git config --global credential.helper "$W/helper.sh"
git config --global --add credential.helper "store --file=$W/stored"
printf 'username=bob\npassword=%s\n' "$PW" >"$W/answer"
: >"$HELPER_LOG"
assert_exit 0 ks --store "$S" push "$HTTPS/ev.git"
assert_eq "$(head_of "$S")" "$(git --git-dir="$W/repos/ev.git" rev-parse main)" "the push landed"
assert_not_contains "$OUT$ERR" "$PW" "the password is not printed"
grep -q "^get protocol=https host=127.0.0.1:${HTTPS##*:}" "$HELPER_LOG" || fail "the helper was not asked: $(cat "$HELPER_LOG")"
grep -q "^store .*username=bob password=$PW" "$HELPER_LOG" || fail "the helper was not told approve: $(cat "$HELPER_LOG")"
grep -qxF "https://bob:$PW@127.0.0.1%3a${HTTPS##*:}" "$W/stored" || grep -qxF "https://bob:$PW@127.0.0.1:${HTTPS##*:}" "$W/stored" ||
    fail "credential-store did not keep the approved one: $(cat "$W/stored" 2>&1)"
pass "a helper's credential is sent to the https remote and approved (credential-store keeps it), never printed"

# The helper's answer goes stale: the server refuses it, the helpers hear `reject`, and
# credential-store drops its entry; the store is unchanged.
printf 'username=bob\npassword=stale-%s\n' "$PW" >"$W/answer"
: >"$W/stored"
printf 'https://bob:stale-%s@127.0.0.1:%s\n' "$PW" "${HTTPS##*:}" >"$W/stored"
git config --global --unset-all credential.helper
git config --global credential.helper "store --file=$W/stored"
git config --global --add credential.helper "$W/helper.sh"
: >"$HELPER_LOG"
before=$(store_fingerprint "$S")
assert_exit 4 ks --store "$S" pull "$HTTPS/ev.git"
assert_store_unchanged "$before" "$S" "a refused helper credential"
grep -q "^erase .*username=bob password=stale-$PW" "$HELPER_LOG" || fail "the helpers were not told reject: $(cat "$HELPER_LOG")"
[[ ! -s $W/stored ]] || fail "credential-store kept the refused password: $(cat "$W/stored")"
assert_not_contains "$OUT$ERR" "stale-$PW" "the refused password is not printed"
pass "a refused helper credential: exit 4, the helpers are told reject (credential-store drops it), store unchanged"

# Plain http: the helpers are never asked (the server asks, nothing is offered).
: >"$HELPER_LOG"
printf 'username=bob\npassword=%s\n' "$PW" >"$W/answer"
before=$(store_fingerprint "$S")
assert_exit 4 ks --store "$S" pull "$PLAIN/ev.git"
assert_store_unchanged "$before" "$S" "plain http"
[[ ! -s $HELPER_LOG ]] || fail "a helper was asked for plain http: $(cat "$HELPER_LOG")"
pass "plain http: git's helpers are not asked"

# No terminal prompt: with no helper holding anything, git is not left waiting on a terminal.
git config --global --unset-all credential.helper
: >"$W/answer"
assert_exit 4 timeout -k 2 30 "$KISTORE" --no-progress --store "$S" pull "$HTTPS/ev.git"
pass "no helper answer: exit 4 at once, no prompt"

summary
