#!/usr/bin/env python3
"""A push over git:// that sends objects beside its commit, as no git client does.

raw_receive_pack.py HOST PORT PATH OLD NEW REF OBJECT... : asks the git daemon's
receive-pack to move REF from OLD to NEW, sending a pack (made by stock
`git pack-objects` in the current repository) of the OBJECTs listed: the commit
NEW and anything else, reachable from it or not. Prints what the server said
(side bands 1 and 2). Used by test_hook.sh to smuggle unreachable trees into a
server, past a hook that walks only what the new ref reaches.
"""
import socket
import subprocess
import sys


def main():
    host, port, path, old, new, ref, *objects = sys.argv[1:]
    sock = socket.create_connection((host, int(port)), timeout=30)

    def pkt(data):
        return b"%04x" % (len(data) + 4) + data

    def recv_exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def read_pkt():
        n = int(recv_exactly(4), 16)
        return None if n == 0 else recv_exactly(n - 4)

    sock.sendall(pkt(b"git-receive-pack %s\0host=%s\0" % (path.encode(), host.encode())))
    while read_pkt() is not None:
        pass
    pack = subprocess.run(["git", "pack-objects", "--stdout"], input="\n".join(objects).encode(),
                          capture_output=True, check=True).stdout
    command = b"%s %s %s\0report-status side-band-64k\n" % (old.encode(), new.encode(), ref.encode())
    sock.sendall(pkt(command) + b"0000" + pack)
    try:
        while (p := read_pkt()) is not None:
            if p[:1] in (b"\x01", b"\x02"):
                sys.stdout.write(p[1:].decode(errors="replace"))
    except EOFError:
        pass


if __name__ == "__main__":
    main()
