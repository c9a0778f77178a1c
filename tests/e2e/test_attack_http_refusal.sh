#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Attacks on the words of an http server that refuses (store/sync/http_refusal.h,
# Connection::check), beyond tests/e2e/test_http_refusal.sh, all held:
#   - C1 controls (U+009B, CSI), bidirectional overrides (U+202E) and bytes
#     that are no UTF-8, in the reason phrase and in the body: shown escaped;
#   - a chunked body that declares 4 GiB and sends 200 KB on one line: cut,
#     under 2,500 bytes of message, at once;
#   - a second answer designed to mislead ("Pushed successfully.", a line
#     that reads as kistore's): quoted as the server's words of a refusal,
#     on one line, exit 4, the store unchanged;
#   - a remote URL whose path holds a percent-encoded CR LF and header: sent
#     as written, no header added to kistore's request;
#   - a URL's user without a password, over plain http: no Authorization
#     sent by kistore's request.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
export KISTORE_AUTHOR="Refusal Attack <refusal-attack@example.org>"
work_in attack_http_refusal
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" import liger "$DATA/liger-sample.csv"

# A server that answers every request by the first segment of its path, and
# logs each request's head on one line.
cat >"$W/server.py" <<'PY'
import socket, sys, threading
port, log, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = threading.Lock()
ANSWERS = {
    "c1": (b"HTTP/1.1 403 Forbidden \xc2\x9b31m\xe2\x80\xaeevil\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n",
           b"csi \xc2\x9b2J bidi \xe2\x80\xaedegnahc\xe2\x80\xac bad \xff\xfe end\n"),
    "mislead": (b"HTTP/1.1 403 Forbidden\r\nContent-Length: %d\r\n\r\n",
                b"Pushed successfully.\nkistore: 5 runs now on the server, nothing to do\n"),
    "bomb": (None, b"HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\n" + b"A" * 200000),
}
def serve(c):
    data = b""
    c.settimeout(5)
    try:
        while b"\r\n\r\n" not in data:
            got = c.recv(4096)
            if not got:
                break
            data += got
        with lock, open(log, "ab") as f:
            f.write(data.split(b"\r\n\r\n")[0].replace(b"\r\n", b" | ") + b"\n")
        kind = data.split(b" ")[1].decode("latin1").split("/")[1]
        head, body = ANSWERS.get(kind, (b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n", b"no\n"))
        c.sendall(body if head is None else (head % len(body)) + body)
    except OSError:
        pass
    c.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(16)
open(ready, "w").close()
while True:
    conn, _ = s.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
PY
P=$(free_port)
LOG=$W/requests.log
: >"$LOG"
_servers_spawn refusing "$W/server.log" "$PY" "$W/server.py" "$P" "$LOG" "$W/ready"
for _ in $(seq 100); do [[ -e $W/ready ]] && break; sleep 0.1; done
[[ -e $W/ready ]] || fail "the server did not start: $(cat "$W/server.log")"
PLAIN=http://127.0.0.1:$P

no_raw_escapes() {
    if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$ERR_FILE"; then
        fail "$1: a raw control byte reached the terminal: $(od -c "$ERR_FILE" | head -5)"
    fi
    if LC_ALL=C grep -q $'\xc2[\x80-\x9f]\|\xe2\x80[\xaa-\xae]\|\xe2\x81[\xa6-\xa9]\|[\xf8-\xff]' "$ERR_FILE"; then
        fail "$1: a raw C1 control, bidirectional override or non-UTF-8 byte reached the terminal: $(od -c "$ERR_FILE" | head -5)"
    fi
}
# refused WHAT URL NEEDLE...: pull and push exit 4 with every NEEDLE on one
# line, nothing raw, the store unchanged.
refused() {
    local what=$1 url=$2 cmd n
    shift 2
    for cmd in pull push; do
        assert_exit_unchanged 4 "$S" "$what: $cmd" ks --store "$S" "$cmd" "$url"
        for n in "$@"; do assert_contains "$ERR" "$n" "$what: $cmd says $n"; done
        assert_eq 1 "$(wc -l <"$ERR_FILE")" "$what: $cmd says it on one line"
        no_raw_escapes "$what: $cmd"
    done
}

refused "C1, bidi, non-UTF-8" "$PLAIN/c1/evidence.git" \
    'HTTP 403 Forbidden \u{009b}31m\u{202e}evil' 'the server said: csi \u{009b}2J bidi \u{202e}degnahc\u{202c} bad \xff\xfe end'
pass "C1 controls, bidirectional overrides and bytes that are no UTF-8, in the reason and the body: shown escaped"

start=$(date +%s)
refused "chunked bomb" "$PLAIN/bomb/evidence.git" "the server said: AAAA" "…"
((${#ERR} < 2500)) || fail "a chunked bomb: ${#ERR} bytes of message"
(($(date +%s) - start < 20)) || fail "a chunked bomb: $(($(date +%s) - start)) s"
pass "a chunked body declaring 4 GiB, 200 KB on one line: cut, at once"

refused "misleading" "$PLAIN/mislead/evidence.git" \
    "refused the request: HTTP 403 Forbidden" "the server said: Pushed successfully. | kistore: 5 runs now on the server"
pass "a second answer that reads as a success: quoted as the server's words of a refusal, one line, exit 4"

: >"$LOG"
assert_exit_unchanged 4 "$S" "an encoded CR LF in the path" ks --store "$S" pull "http://alice@127.0.0.1:$P/c1/x%0d%0aX-Evil:%201/evidence.git"
assert_eq 2 "$(grep -c '^GET /c1/x%0d%0aX-Evil:%201/evidence.git/info/refs?service=git-upload-pack HTTP/1.1 | ' "$LOG")" \
    "both requests with the path as written: $(cat "$LOG")"
assert_not_contains "$(grep -a 'kistore' "$LOG")" "| X-Evil" "kistore's request: no header from the URL"
assert_not_contains "$(grep -a 'kistore' "$LOG")" "Authorization" "kistore's request: no credential for a user without a password"
pass "a percent-encoded CR LF in the URL's path, a user without a password over http: no header added, nothing sent"

summary
