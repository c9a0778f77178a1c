#!/usr/bin/env python3
"""Prints, for the git pack files given, the distinct zlib stream headers of their entries
(hex, e.g. "7801"), one per line, sorted. A kistore push writes documents and trees at level 0
and commits at level 1 (7801), index files at level 6 (789c); a pack re-deflated at git's or
libgit2's default level has 789c alone."""
import sys
import zlib


def headers(path):
    data = open(path, "rb").read()
    if data[:4] != b"PACK":
        sys.exit(f"{path}: not a pack")
    count = int.from_bytes(data[8:12], "big")
    view = memoryview(data)
    at, seen = 12, set()
    for _ in range(count):
        c = data[at]
        kind = (c >> 4) & 7
        at += 1
        while c & 0x80:
            c = data[at]
            at += 1
        if kind == 6:  # offset delta: a variable-length offset first
            while data[at] & 0x80:
                at += 1
            at += 1
        elif kind == 7:  # reference delta: the base's id first
            at += 20
        seen.add(data[at:at + 2].hex())
        d = zlib.decompressobj()
        while not d.eof:  # in pieces: the entry's compressed length is not stored
            piece = view[at:at + 65536]
            if not piece:
                sys.exit(f"{path}: truncated entry")
            d.decompress(piece)
            at += len(piece) - len(d.unused_data)
    return seen


found = set()
for p in sys.argv[1:]:
    found |= headers(p)
print("\n".join(sorted(found)))
