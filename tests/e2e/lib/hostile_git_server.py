#!/usr/bin/env python3
"""Hostile git:// servers for e2e tests.

usage: hostile_git_server.py MODE PORT READY [UPSTREAM_PORT]

MODE
  err       answers every request with an ERR packet whose text holds escape
            sequences (clear screen, window title), a newline with a fake
            "error:" line, C1 controls, bidi overrides and 100 KB of text
  garbage   answers with bytes that are not pkt-lines (escapes included)
  truncate  a proxy to the git daemon at 127.0.0.1:UPSTREAM_PORT that cuts the
            connection a few hundred bytes into the pack it sends
  corrupt   the same proxy, flipping bytes inside the pack (framing kept)
  no-report-status
            the same proxy, removing report-status (and -v2) from the
            capabilities the daemon's receive-pack advertises, as a server
            that does not implement it would
Listens on 127.0.0.1:PORT; creates READY once listening; runs until killed.
"""
import socket
import socketserver
import sys
import threading

mode, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
upstream = int(sys.argv[4]) if len(sys.argv) > 4 else 0

HOSTILE = ("\x1b[2J\x1b[H\x1b]0;pwned\x07 access denied\nerror: fake second line \u202etxt.exe"
           "\u009b31m\x7f " + "A" * 100_000).encode()


def pkt(data):
    return b"%04x" % (len(data) + 4) + data


def read_pkt(sock):
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    n = int(head, 16)
    data = b""
    while len(data) < max(n - 4, 0):
        chunk = sock.recv(n - 4 - len(data))
        if not chunk:
            break
        data += chunk
    return data


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock = self.request
        if mode in ("err", "garbage"):
            read_pkt(sock)  # "git-upload-pack /repo.git\0host=...\0"
            if mode == "err":
                # An ERR packet is at most 65520 bytes: send one that long, then another.
                sock.sendall(pkt(b"ERR " + HOSTILE[:65000]))
            else:
                sock.sendall(b"\x1b[2J\x1b]0;garbage\x07zzzz not a pkt-line\n" + bytes(range(256)))
            return
        self.proxy(sock)

    def proxy(self, client):
        server = socket.create_connection(("127.0.0.1", upstream))
        done = threading.Event()

        def upward():
            try:
                while not done.is_set():
                    data = client.recv(65536)
                    if not data:
                        break
                    server.sendall(data)
            except OSError:
                pass
            done.set()

        threading.Thread(target=upward, daemon=True).start()
        seen, after_pack = b"", -1
        first = mode == "no-report-status"
        try:
            while not done.is_set():
                data = server.recv(65536)
                if not data:
                    break
                if first:
                    while len(data) < 4 or len(data) < int(data[:4], 16):
                        more = server.recv(65536)
                        if not more:
                            break
                        data += more
                    n = int(data[:4], 16)
                    line = data[4:n]
                    for cap in (b" report-status-v2", b" report-status", b"report-status-v2 ", b"report-status "):
                        line = line.replace(cap, b"")
                    data = pkt(line) + data[n:]
                    first = False
                if after_pack < 0:
                    seen = (seen + data)[-65536:]
                    at = data.find(b"PACK")
                    if at >= 0:
                        after_pack = len(data) - at
                else:
                    after_pack += len(data)
                if after_pack >= 0 and mode == "truncate" and after_pack > 300:
                    client.sendall(data[: max(0, len(data) - (after_pack - 300))])
                    break
                if after_pack >= 0 and mode == "corrupt":
                    buf = bytearray(data)
                    start = data.find(b"PACK")
                    # flip bytes in the entries, past the 12-byte header; keep sideband framing
                    for i in range(max(start + 40, 0) if start >= 0 else 0, len(buf), 97):
                        if buf[i] not in b"0123456789abcdef":
                            buf[i] ^= 0x5a
                    data = bytes(buf)
                client.sendall(data)
        except OSError:
            pass
        done.set()
        for s in (client, server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


server = Server(("127.0.0.1", port), Handler)
open(ready, "w").close()
server.serve_forever()
