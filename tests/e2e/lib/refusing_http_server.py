#!/usr/bin/env python3
"""Smart-HTTP remotes that refuse, each in its own words, for e2e tests.

usage: refusing_http_server.py LOG READY LISTENER...

LISTENER is NAME:PORT:plain, NAME:PORT:tls:CERT:KEY (https), or
NAME:PORT:swap:CERT:KEY:CERT2:KEY2 (https that presents CERT on its first
connection and CERT2 on every later one: the client's second request meets
another certificate). Each listens on 127.0.0.1:PORT and answers by the
first segment of the path:

  /deny/...     403 "Permission to org/evidence denied to alice." (text/plain)
  /auth/...     401 with a Basic challenge until a request carries an
                Authorization header with a password, then 403 "Permission to org/evidence
                denied to <user>." (as GitHub answers a token without access)
  /echo/...     401 with a Basic challenge until a password comes, then 403 quoting the Authorization
                header it got, its user:password and its password
  /login/...    401 with a Basic challenge and "Bad credentials: the token
                expired on 2026-11-30." every time
  /missing/...  404 "Repository not found." (chunked)
  /ansi/...     403, a body with terminal escapes, BEL and a bare CR
  /html/...     403, nginx's HTML error page
  /huge/...     403, a 1 MB body of 100-character lines
  /stall/...    403, headers and 20 bytes of a 1,000-byte body, then silence
                for 60 s
  /then200/...  403 to every odd request of a path, 200 "All is well." to
                every even one (kistore's own request)
  /then302/...  the same, with a redirect to /deny/ instead of the 200

Every request is logged to LOG as "NAME METHOD PATH auth=<header or ->".
READY is created once all listen. Runs until killed.
"""
import base64
import ssl
import sys
import threading
import time

sys.dont_write_bytecode = True  # import e2e_http without a __pycache__ in the source tree
from e2e_http import QuietHandler, Server  # noqa: E402

log_path, ready = sys.argv[1], sys.argv[2]
lock = threading.Lock()
seen = {}  # path -> requests so far (then200, then302)

HTML = (b"<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n"
        b"<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n")


def handler_for(name):
    class Refuser(QuietHandler):
        def log_request_line(self):
            with lock, open(log_path, "a", encoding="utf-8") as f:
                f.write(f"{name} {self.command} {self.path} auth={self.headers.get('Authorization', '-')}\n")

        def answer(self, status, body, content_type="text/plain", headers=()):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:
                pass  # the client read what it wanted and left

        def handle_any(self):
            self.log_request_line()
            kind = self.path.split("/")[1] if self.path.count("/") > 1 else ""
            challenge = [("WWW-Authenticate", 'Basic realm="evidence"')]
            auth = self.headers.get("Authorization")
            if kind == "deny":
                self.answer(403, b"Permission to org/evidence denied to alice.\n")
            elif kind == "auth":
                user, _, password = (base64.b64decode(auth.split(" ", 1)[1]).decode("utf-8", "replace")
                                     if auth else ":").partition(":")
                if password:
                    self.answer(403, f"Permission to org/evidence denied to {user}.\n".encode())
                else:
                    self.answer(401, b"Authentication required.\n", headers=challenge)
            elif kind == "echo" and not (auth and base64.b64decode(auth.split(" ", 1)[1]).partition(b":")[2]):
                self.answer(401, b"Authentication required.\n", headers=challenge)
            elif kind == "echo":
                sent = base64.b64decode(auth.split(" ", 1)[1])
                self.answer(403, b"You sent " + auth.encode() + b"\nthat is " + sent + b"\nand " +
                            sent.partition(b":")[2] + b"\n")
            elif kind == "login":
                self.answer(401, b"Bad credentials: the token expired on 2026-11-30.\n", headers=challenge)
            elif kind == "missing":
                self.send_response(404)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"b\r\nRepository \r\na\r\nnot found.\r\n1\r\n\n\r\n0\r\n\r\n")
            elif kind == "ansi":
                self.answer(403, b"\x1b[31mDENIED\x1b[0m\x07 by policy\rOVERWRITTEN\n\x1b]0;pwned\x07title\n")
            elif kind == "html":
                self.answer(403, HTML, "text/html")
            elif kind == "huge":
                line = b"H" * 99 + b"\n"
                self.answer(403, line * (1024 * 1024 // 100))
            elif kind == "stall":
                self.send_response(403)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", "1000")
                self.end_headers()
                self.wfile.write(b"Stalled on purpose: ")
                self.wfile.flush()
                time.sleep(60)
            elif kind in ("then200", "then302"):
                with lock:
                    seen[self.path] = seen.get(self.path, 0) + 1
                    first = seen[self.path] % 2 == 1
                if first:
                    self.answer(403, b"First answer.\n")
                elif kind == "then200":
                    self.answer(200, b"All is well.\n")
                else:
                    self.answer(302, b"Moved.\n", headers=[("Location", "/deny/evidence.git/info/refs")])
            else:
                self.answer(500, b"no such test path\n")

    return Refuser


class TlsServer(Server):
    """Wraps each accepted connection in TLS, with the first context for the
    first connection and the second for every later one."""

    def __init__(self, address, handler, first, later):
        super().__init__(address, handler)
        self.contexts = [first, later]
        self.accepted = 0

    def get_request(self):
        sock, addr = self.socket.accept()
        ctx = self.contexts[0 if self.accepted == 0 else 1]
        self.accepted += 1
        sock.settimeout(20)
        return ctx.wrap_socket(sock, server_side=True), addr


def context(cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


servers = []
for spec in sys.argv[3:]:
    parts = spec.split(":")
    name, port, mode = parts[0], int(parts[1]), parts[2]
    handler = handler_for(name)
    if mode == "plain":
        servers.append(Server(("127.0.0.1", port), handler))
    elif mode == "tls":
        c = context(parts[3], parts[4])
        servers.append(TlsServer(("127.0.0.1", port), handler, c, c))
    elif mode == "swap":
        servers.append(TlsServer(("127.0.0.1", port), handler, context(parts[3], parts[4]),
                                 context(parts[5], parts[6])))
    else:
        sys.exit(f"unknown listener mode {mode}")
for s in servers:
    threading.Thread(target=s.serve_forever, daemon=True).start()
open(ready, "w").close()
threading.Event().wait()
