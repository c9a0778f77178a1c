#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# What an http(s) server says when it refuses a request reaches the person in
# its own words (issue 31 item 4). libgit2 1.5 drops a refusal's body and says
# "unexpected http status code: 403"; kistore asks the same URL once more
# itself (store/sync/http_refusal.h) and shows the status and the body: exit
# 4, the store byte for byte as it was, the body escaped, cut and bounded, no
# secret printed, and only the credential the failed attempt sent to that
# origin sent again. A second answer that is no refusal (2xx, a redirect, not
# followed) leaves libgit2's message as it was.
#
# Servers: nginx + git http-backend over TLS with basic auth, refusing
# receive-pack's discovery with 403 and a text (pull works, push is refused);
# small Python servers (lib/refusing_http_server.py) that answer 403, 401,
# 404, terminal escapes, an HTML page, 1 MB, a stall, and a TLS server that
# shows a trusted certificate for another host name, or one of an unknown CA,
# to the second connection (kistore's own request): nothing of its answer may
# be shown, and kistore's message stays as it was.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). About 30 s (one
# stalled server is waited for 10 s).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
work_in refusal
unset KISTORE_TOKEN KISTORE_TOKEN_URL
export GIT_ASKPASS=/bin/false SSH_ASKPASS=/bin/false

S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$FX"
PW=Refusal-pw-for-bob-7q

# no_raw_escapes WHAT : the last command's stderr holds no raw control byte
# but newline (the server's escapes arrive as \x1b, \a, \r text).
no_raw_escapes() {
    if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$ERR_FILE"; then
        fail "$1: a raw control byte reached the terminal: $(od -c "$ERR_FILE" | head -5)"
    fi
}

# --- nginx + git http-backend: pull works, push is refused in the server's words -----------------
mkdir -p "$W/repos"
git init -q --bare -b main "$W/repos/evidence.git"
# shellcheck disable=SC2016 # nginx's variable, for nginx to expand
HTTP_GIT_EXTRA='if ($arg_service = git-receive-pack) { return 403 "Permission to org/evidence denied to alice.\n"; }' \
    start_http_git "$W/repos" --tls --auth bob "$PW"
NGINX=$HTTP_GIT_URL
export KISTORE_SSL_CAINFO=$HTTP_GIT_CA
# Seed the server repository with stock git, through the back door.
ks --store "$S" push "$W/repos/evidence.git" >/dev/null 2>&1 || fail "seeding the repository by path"
export KISTORE_TOKEN=$PW KISTORE_TOKEN_URL=$NGINX/
URL=${NGINX/https:\/\//https://bob@}/evidence.git
assert_exit 0 ks --store "$S" pull "$URL"
pass "nginx: pull over https with bob's password works"
assert_exit_unchanged 4 "$S" "push refused by nginx" ks --store "$S" push "$URL"
assert_contains "$ERR" "refused the request: HTTP 403 Forbidden (the server does not let this account push to it); the server said: Permission to org/evidence denied to alice." "push: the server's words and what they mean"
assert_not_contains "$ERR" "unexpected http status code" "push: not libgit2's bare status"
assert_not_contains "$OUT$ERR" "$PW" "push: the password is not printed"
pass "nginx refuses receive-pack with 403 and a text: push exits 4 with the server's words, store unchanged"
unset KISTORE_TOKEN KISTORE_TOKEN_URL KISTORE_SSL_CAINFO

# --- Python servers ---------------------------------------------------------------------------
make_cert() { # DIR CN : a self-signed certificate for CN (no subjectAltName, as make_tls_cert)
    mkdir -p "$1"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/key.pem" -out "$1/cert.pem" -days 2 -subj "/CN=$2" \
        >"$1/openssl.log" 2>&1 || fail "openssl req for $2: $(cat "$1/openssl.log")"
}
make_cert "$W/good" 127.0.0.1
make_cert "$W/wrongname" wrong-host.example
make_cert "$W/unknown" 127.0.0.1
# Trusted: the good certificate and the wrong-name one (a CA the user trusts, for another host).
cat "$W/good/cert.pem" "$W/wrongname/cert.pem" >"$W/trusted.pem"
export KISTORE_SSL_CAINFO=$W/trusted.pem
P_PLAIN=$(free_port) P_TLS=$(free_port) P_NAME=$(free_port) P_CA=$(free_port)
LOG=$W/requests.log
: >"$LOG"
_servers_spawn refusing "$W/refusing.log" "$PY" "$here/lib/refusing_http_server.py" "$LOG" "$W/ready" \
    "plain:$P_PLAIN:plain" "tls:$P_TLS:tls:$W/good/cert.pem:$W/good/key.pem" \
    "name:$P_NAME:swap:$W/good/cert.pem:$W/good/key.pem:$W/wrongname/cert.pem:$W/wrongname/key.pem" \
    "ca:$P_CA:swap:$W/good/cert.pem:$W/good/key.pem:$W/unknown/cert.pem:$W/unknown/key.pem"
for _ in $(seq 100); do [[ -e $W/ready ]] && break; sleep 0.1; done
[[ -e $W/ready ]] || fail "the refusing servers did not start: $(cat "$W/refusing.log")"
HTTPS=https://127.0.0.1:$P_TLS
PLAIN=http://127.0.0.1:$P_PLAIN

# refused CODE WHAT URL NEEDLE... : pull and push exit CODE with every NEEDLE, the store unchanged,
# no raw control byte; clone exits CODE with the first NEEDLE and leaves no folder.
refused() {
    local code=$1 what=$2 url=$3 cmd n
    shift 3
    for cmd in pull push; do
        assert_exit_unchanged "$code" "$S" "$what: $cmd" ks --store "$S" "$cmd" "$url"
        for n in "$@"; do assert_contains "$ERR" "$n" "$what: $cmd says $n"; done
        no_raw_escapes "$what: $cmd"
    done
    rm -rf "$W/clone"
    assert_exit "$code" ks clone "$url" "$W/clone"
    assert_contains "$ERR" "$1" "$what: clone says $1"
    no_raw_escapes "$what: clone"
    [[ ! -e $W/clone ]] || fail "$what: a refused clone left its folder"
}

refused 4 "403" "$HTTPS/deny/evidence.git" \
    "the server said: Permission to org/evidence denied to alice." "refused the request: HTTP 403 Forbidden (the server does not let this account "
assert_contains "$(ks --store "$S" pull "$HTTPS/deny/evidence.git" 2>&1)" "(the server does not let this account read it)" "403: a pull is told it may not read"
grep -q "^tls GET /deny/evidence.git/info/refs?service=git-upload-pack auth=-$" "$LOG" || fail "no upload-pack discovery logged: $(cat "$LOG")"
grep -q "^tls GET /deny/evidence.git/info/refs?service=git-receive-pack auth=-$" "$LOG" || fail "push asked no receive-pack discovery: $(cat "$LOG")"
assert_contains "$ERR" "$HTTPS/deny/evidence.git" "clone: names the URL"
pass "403 with a text: pull, push and clone exit 4 with the server's words, store unchanged, no folder left"

refused 4 "404 (chunked)" "$HTTPS/missing/evidence.git" \
    "HTTP 404 Not Found (the server has no repository there, or none this account may see); the server said: Repository not found."
pass "404 with a chunked text: the server's words"

refused 4 "escapes" "$HTTPS/ansi/evidence.git" \
    'the server said: \x1b[31mDENIED\x1b[0m\x07 by policy\rOVERWRITTEN | \x1b]0;pwned\x07title'
pass "a body with terminal escapes, BEL and CR: shown escaped, nothing raw"

refused 4 "html" "$HTTPS/html/evidence.git" "the server said: 403 Forbidden | nginx/1.22.1"
assert_not_contains "$ERR" "<center>" "html: no tags"
pass "nginx's HTML error page: its text, without tags"

: >"$LOG"
refused 4 "1 MB" "$HTTPS/huge/evidence.git" "the server said: HHHHHHHHHH"
assert_contains "$ERR" "…" "1 MB: the body is cut"
(($(wc -c <"$ERR_FILE") < 2500)) || fail "1 MB: the message is $(wc -c <"$ERR_FILE") bytes"
pass "a 1 MB body: cut (under 2,500 bytes of message), no hang"

# 401: the token is sent over https when it is bound there, the server refuses it; the server's
# reason joins kistore's. Over plain http the token is never sent, by libgit2 or by kistore's request.
export KISTORE_TOKEN=$PW KISTORE_TOKEN_URL=$HTTPS/
: >"$LOG"
assert_exit_unchanged 4 "$S" "401 over https" ks --store "$S" pull "${HTTPS/https:\/\//https://bob@}/login/evidence.git"
assert_contains "$ERR" "authentication failed for" "401: kistore's own line"
assert_contains "$ERR" "the server said (HTTP 401 Unauthorized): Bad credentials: the token expired on 2026-11-30." "401: the server's reason"
assert_not_contains "$OUT$ERR" "$PW" "401: the password is not printed"
sent=$(printf 'bob:%s' "$PW" | base64 -w0)
n_auth=$(grep -c "auth=Basic $sent\$" "$LOG" || true)
((n_auth == 2)) || fail "401: expected the token twice (libgit2's try and kistore's one request): $(cat "$LOG")"
pass "401 over https: kistore's line and the server's reason; the bound token sent once more, never printed"

: >"$LOG"
assert_exit_unchanged 4 "$S" "401 over plain http" ks --store "$S" pull "$PLAIN/login/evidence.git"
assert_contains "$ERR" "the server said (HTTP 401 Unauthorized): Bad credentials" "plain 401: the server's reason"
if grep -v "auth=-$" "$LOG"; then fail "plain http: a credential was sent"; fi
pass "401 over plain http: the server's reason, no credential sent by anyone"

# GitHub's way: 401 first, then 403 for the token's owner. kistore's request carries the same
# Authorization libgit2 sent, so the server names the account.
: >"$LOG"
assert_exit_unchanged 4 "$S" "401 then 403" ks --store "$S" push "${HTTPS/https:\/\//https://bob@}/auth/evidence.git"
assert_contains "$ERR" "HTTP 403 Forbidden (the server does not let this account push to it); the server said: Permission to org/evidence denied to bob." "401 then 403: the account named"
n_auth=$(grep -c "service=git-receive-pack auth=Basic $sent\$" "$LOG" || true)
((n_auth == 2)) || fail "401 then 403: the Authorization libgit2 sent, once more: $(cat "$LOG")"
assert_not_contains "$OUT$ERR" "$PW" "401 then 403: the password is not printed"
pass "401 then 403 (GitHub's way): the account named in the server's words, the same Authorization sent"

# A server that quotes the credential it got: shown masked, in every form.
assert_exit_unchanged 4 "$S" "echo" ks --store "$S" pull "${HTTPS/https:\/\//https://bob@}/echo/evidence.git"
assert_contains "$ERR" "the server said: You sent Basic *** | that is bob:*** | and ***" "echo: the credential masked"
assert_not_contains "$OUT$ERR" "$PW" "echo: the password is not printed"
assert_not_contains "$OUT$ERR" "$sent" "echo: nor its base64"
pass "a server that quotes the credential it got: the password and the header's base64 masked"
unset KISTORE_TOKEN KISTORE_TOKEN_URL

# A certificate kistore's request must refuse, though libgit2 accepted the first connection's.
for srv in "name:$P_NAME:a trusted certificate for another host name" "ca:$P_CA:a certificate of an unknown CA"; do
    IFS=: read -r tag port what <<<"$srv"
    : >"$LOG"
    assert_exit_unchanged 4 "$S" "$what" ks --store "$S" pull "https://127.0.0.1:$port/deny/evidence.git"
    assert_contains "$ERR" "unexpected http status code: 403" "$what: libgit2's message, as before"
    assert_not_contains "$ERR" "Permission to" "$what: nothing of the second answer shown"
    assert_eq "1" "$(grep -c "^$tag GET" "$LOG" || true)" "$what: kistore's request was never sent"
    pass "$what on kistore's connection: refused in the handshake, nothing shown, libgit2's message kept"
done

# kistore's request answered with a success or a redirect: libgit2's message, as before, and no
# redirect followed.
for kind in then200 then302; do
    : >"$LOG"
    assert_exit_unchanged 4 "$S" "$kind" ks --store "$S" pull "$HTTPS/$kind/evidence.git"
    assert_contains "$ERR" "unexpected http status code: 403" "$kind: libgit2's message, as before"
    assert_not_contains "$ERR" "the server said" "$kind: no words of a second answer that is no refusal"
    assert_eq "2" "$(grep -c "GET /$kind/evidence.git/info/refs?service=git-upload-pack" "$LOG" || true)" "$kind: two requests"
    if grep -q "/deny/" "$LOG"; then fail "$kind: the redirect was followed: $(cat "$LOG")"; fi
done
pass "a second answer that is a success or a redirect: libgit2's message kept, no redirect followed"

# libgit2 itself meets the wrong host name: the certificate's refusal, nothing asked again.
export KISTORE_SSL_CAINFO=$W/wrongname/cert.pem
: >"$LOG"
assert_exit_unchanged 4 "$S" "wrong host name first" ks --store "$S" pull "https://127.0.0.1:$P_NAME/deny/evidence.git"
assert_contains "$ERR" "TLS certificate" "wrong host name: the certificate is the reason"
assert_not_contains "$ERR" "Permission to" "wrong host name: nothing of the server's words"
export KISTORE_SSL_CAINFO=$W/trusted.pem
pass "a certificate libgit2 refuses: the refusal names it, no second request shown"

# A server that sends its headers and then nothing: the message comes within the deadline.
start=$SECONDS
assert_exit_unchanged 4 "$S" "stall" ks --store "$S" pull "$HTTPS/stall/evidence.git"
took=$((SECONDS - start))
((took < 20)) || fail "stall: took ${took}s"
assert_contains "$ERR" "the server said: Stalled on purpose: | …" "stall: what came, marked cut"
pass "headers then silence: exit 4 in ${took}s with what came"

summary
