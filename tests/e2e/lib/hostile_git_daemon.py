#!/usr/bin/env python3
"""A tiny hostile git:// server for kistore's attack tests.

It speaks just enough of git's pack protocol (version 0, as git daemon and
upload-pack do; gitprotocol-pack(5)) for a fetch: it reads the request line,
advertises one branch (refs/heads/main, and HEAD pointing at it) with a
fixed capability list, reads the client's want/have lines up to "done",
answers NAK, and then sends whatever it was told to: a crafted pack, an ERR
packet, or bytes with terminal escape sequences in a sideband message. It
never checks what it sends. Listens on 127.0.0.1 only, serves connections
one at a time until killed.

  hostile_git_daemon.py --port-file F --ref ID (--pack FILE | --err MSG)
                        [--sideband] [--message TEXT] [--hang]

--port-file: where to write the port it listens on, once it listens.
--ref:       the id to advertise for refs/heads/main.
--pack:      the bytes to send after NAK (as they are: any pack, or not one).
--err:       send "ERR MSG" instead of the advertisement.
--sideband:  offer side-band-64k; the pack then goes in band 1, and
             --message in band 2 (progress) before it.
--hang:      after NAK, send nothing and keep the connection open.
"""
import argparse
import os
import socket
import sys
import time


def pkt(data):
    if isinstance(data, str):
        data = data.encode()
    return b"%04x" % (len(data) + 4) + data


def read_pkt(conn, buffer):
    """One pkt-line's payload (None for a flush, b"" at end of stream)."""
    while len(buffer) < 4:
        chunk = conn.recv(65536)
        if not chunk:
            return b"", buffer
        buffer += chunk
    size = int(buffer[:4], 16)
    if size == 0:
        return None, buffer[4:]
    while len(buffer) < size:
        chunk = conn.recv(65536)
        if not chunk:
            return b"", buffer
        buffer += chunk
    return buffer[4:size], buffer[size:]


def serve(conn, a, pack):
    buffer = b""
    request, buffer = read_pkt(conn, buffer)
    if not request:
        return
    if a.err:
        conn.sendall(pkt("ERR " + a.err + "\n"))
        return
    caps = "ofs-delta symref=HEAD:refs/heads/main agent=hostile/1"
    if a.sideband:
        caps = "side-band-64k " + caps
    conn.sendall(pkt(a.ref + " HEAD\0" + caps + "\n") + pkt(a.ref + " refs/heads/main\n") + b"0000")
    # wants, a flush, haves (in rounds of a flush each), then "done"
    # (without multi_ack, each flush after haves gets a NAK of its own)
    haves = False
    while True:
        line, buffer = read_pkt(conn, buffer)
        if line == b"":
            return  # the client listed the refs and left
        if line is None:
            if haves:
                conn.sendall(pkt("NAK\n"))
            haves = False
            continue
        haves = haves or line.startswith(b"have ")
        if line.strip() == b"done":
            break
    conn.sendall(pkt("NAK\n"))
    if a.hang:
        time.sleep(3600)
        return
    if a.sideband:
        if a.message:
            conn.sendall(pkt(b"\2" + a.message.encode()))
        for at in range(0, len(pack), 65515):
            conn.sendall(pkt(b"\1" + pack[at:at + 65515]))
        conn.sendall(b"0000")
    else:
        conn.sendall(pack)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--ref", required=True)
    parser.add_argument("--pack")
    parser.add_argument("--err")
    parser.add_argument("--sideband", action="store_true")
    parser.add_argument("--message")
    parser.add_argument("--hang", action="store_true")
    a = parser.parse_args()
    pack = open(a.pack, "rb").read() if a.pack else b""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % listener.getsockname()[1])
    os.rename(a.port_file + ".tmp", a.port_file)
    while True:
        conn, _ = listener.accept()
        try:
            serve(conn, a, pack)
        except OSError as e:
            print("hostile_git_daemon: %s" % e, file=sys.stderr)
        finally:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()


if __name__ == "__main__":
    main()
