#!/usr/bin/env python3
"""A hostile smart-HTTP remote that redirects to another origin, for e2e tests.

usage: hostile_http_server.py PORT TARGET_HOST TARGET_PORT LOG READY

Listens on 127.0.0.1:PORT and answers every request with 302 to the same path
at http://TARGET_HOST:TARGET_PORT (another origin), and listens there
(TARGET_HOST is a loopback address such as 127.0.0.2) answering 401 with a
Basic challenge, so that a client that would hand out credentials does.
Every request is logged to LOG as "<origin> <method> <path> auth=<header or ->",
so a test can assert that no Authorization header reached either side. READY
is created once both listen. Runs until killed.
"""
import sys
import threading

sys.dont_write_bytecode = True  # import e2e_http without a __pycache__ in the source tree
from e2e_http import QuietHandler, Server  # noqa: E402

port, target_host, target_port, log_path, ready = (int(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                                                   sys.argv[4], sys.argv[5])
lock = threading.Lock()


def log(origin, handler):
    with lock, open(log_path, "a", encoding="utf-8") as f:
        f.write(f"{origin} {handler.command} {handler.path} auth={handler.headers.get('Authorization', '-')}\n")


class Redirector(QuietHandler):
    def handle_any(self):
        log(f"127.0.0.1:{port}", self)
        self.send_response(302)
        self.send_header("Location", f"http://{target_host}:{target_port}{self.path}")
        self.send_header("Content-Length", "0")
        self.end_headers()


class Collector(QuietHandler):
    def handle_any(self):
        log(f"{target_host}:{target_port}", self)
        body = b"credentials, please\n"
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="elsewhere"')
        # With a Content-Type, libgit2 1.5.1 reads the body through before it
        # asks again; without one it leaves the body in its read buffer and,
        # should it ask again, parses those bytes as the next answer ("http
        # parser error: invalid constant string" instead of the real failure).
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


servers = [Server(("127.0.0.1", port), Redirector), Server((target_host, target_port), Collector)]
for s in servers[1:]:
    threading.Thread(target=s.serve_forever, daemon=True).start()
open(ready, "w").close()
servers[0].serve_forever()
