#!/usr/bin/env python3
"""An http(s) server that asks for credentials and logs what it is sent, for e2e tests.

usage: auth_probe_server.py NAME PORT LOG READY [--tls CERT KEY] [--redirect BASE]

Listens on 127.0.0.1:PORT (https with CERT and KEY, PEM files, when --tls is
given). Every request is logged to LOG as "<NAME> <method> <path>
auth=<Authorization header or ->", so that a test can tell exactly what
credentials reached which server. It answers 401 with a Basic challenge to
every request, with credentials or without (it serves no repository: it only
records what a client would hand it). With --redirect it
answers every request with 302 to BASE + the same path instead (another
origin). READY is created once it listens. Runs until killed.
"""
import ssl
import sys
import threading

sys.dont_write_bytecode = True  # import e2e_http without a __pycache__ in the source tree
from e2e_http import QuietHandler, Server  # noqa: E402

name, port, log_path, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rest = sys.argv[5:]
tls = redirect = None
while rest:
    if rest[0] == "--tls":
        tls, rest = (rest[1], rest[2]), rest[3:]
    elif rest[0] == "--redirect":
        redirect, rest = rest[1], rest[2:]
    else:
        sys.exit(f"unknown argument {rest[0]}")
lock = threading.Lock()


class Handler(QuietHandler):
    protocol_version = "HTTP/1.1"

    def handle_any(self):
        auth = self.headers.get("Authorization")  # logged, never accepted
        with lock, open(log_path, "a", encoding="utf-8") as f:
            f.write(f"{name} {self.command} {self.path} auth={auth or '-'}\n")
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if redirect:
            self.send_response(302)
            self.send_header("Location", redirect + self.path)
        else:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="probe"')
        self.send_header("Content-Length", "0")
        self.end_headers()


server = Server(("127.0.0.1", port), Handler)
if tls:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*tls)
    server.socket = context.wrap_socket(server.socket, server_side=True)
open(ready, "w").close()
server.serve_forever()
